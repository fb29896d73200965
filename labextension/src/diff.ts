/**
 * A line diff: rows of kept, removed and added lines (a longest common subsequence; past a
 * size where that costs too much, all old lines removed then all new lines added).
 */

export type RowKind = ' ' | '-' | '+';
export interface Row {
  kind: RowKind;
  text: string;
}

/** Past this many cells of the table, the diff is all removed then all added. */
const TABLE_LIMIT = 4_000_000;

export function splitLines(text: string): string[] {
  return text === '' ? [] : text.split('\n');
}

export function lineDiff(before: string, after: string): Row[] {
  const a = splitLines(before);
  const b = splitLines(after);
  // Common head and tail first: most edits touch a few lines.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const rows: Row[] = a.slice(0, head).map(text => ({ kind: ' ', text }));
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  rows.push(...middle(x, y));
  rows.push(...a.slice(a.length - tail).map(text => ({ kind: ' ' as RowKind, text })));
  return rows;
}

function middle(x: string[], y: string[]): Row[] {
  if ((x.length + 1) * (y.length + 1) > TABLE_LIMIT) {
    return [
      ...x.map(text => ({ kind: '-' as RowKind, text })),
      ...y.map(text => ({ kind: '+' as RowKind, text }))
    ];
  }
  const n = x.length;
  const m = y.length;
  // lcs[i][j]: the longest common subsequence of x[i:] and y[j:].
  const lcs: Uint32Array[] = [];
  for (let i = 0; i <= n; i++) lcs.push(new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] =
        x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const rows: Row[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      rows.push({ kind: ' ', text: x[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      rows.push({ kind: '-', text: x[i++] });
    } else {
      rows.push({ kind: '+', text: y[j++] });
    }
  }
  while (i < n) rows.push({ kind: '-', text: x[i++] });
  while (j < m) rows.push({ kind: '+', text: y[j++] });
  return rows;
}
