"""The markdown tables a benchmark script prints, for the tests that check them cell by cell."""
import sys


def tables(text):
    """Each markdown table as a list of {header: cell} rows."""
    out, current, head = [], None, None
    for line in text.splitlines():
        if not line.startswith("|"):
            current = head = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if head is None:
            head, current = cells, []
            out.append(current)
        elif not cells[0].startswith("---"):
            current.append(dict(zip(head, cells)))
    return out


def expect(row, column, value):
    """Ends the test naming the row (by its first cell) when the cell is not `value`."""
    if row.get(column) != value:
        sys.exit(f"{next(iter(row.values()), '')}: {column!r} is {row.get(column)!r}, expected {value!r}")


def expect_cells(row, columns, values):
    """expect() for each column with its value, in order."""
    if len(columns) != len(values):
        sys.exit(f"the test gives {len(values)} values for {len(columns)} columns")
    for column, value in zip(columns, values):
        expect(row, column, value)
