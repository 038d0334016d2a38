/**
 * The rollbacks that can still be undone, oldest first: each `undo` cancels the latest rollback
 * not yet undone. The last one is what `undoRollback()` restores next.
 */
export function undoStack<R extends { kind: string }>(records: readonly R[]): R[] {
  const stack: R[] = [];
  for (const record of records) {
    if (record.kind === 'rollback') stack.push(record);
    else stack.pop();
  }
  return stack;
}
