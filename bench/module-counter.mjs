// `node --import ./module-counter.mjs ...` (bench/cli-startup.ts): appends the URL of every
// module file the process loads to the file named by BENCH_MODULES_OUT — ES modules through a
// loader hook as they load, CommonJS ones from `require.cache` at exit — so the bench can say
// how many files a command opens (issue 29: start-up is module count, and the count does not
// move with machine load the way wall time does).
import { appendFileSync } from 'node:fs';
import { Module, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const out = process.env.BENCH_MODULES_OUT;
if (out) {
  register(
    `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
const out = ${JSON.stringify(out)};
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(out, url + '\\n');
  return next(url, context);
}`)}`,
  );
  process.on('exit', () => {
    const files = Object.keys(Module._cache).filter((key) => key.startsWith('/'));
    appendFileSync(out, files.map((file) => `${pathToFileURL(file).href}\n`).join(''));
  });
}
