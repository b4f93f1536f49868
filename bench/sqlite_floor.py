#!/usr/bin/env python3
"""SQLite's own cost of storing an ingest's rows: the floor under `ingest`.

    python3 bench/sqlite_floor.py bench/out/out.db

Copies the `events` and `event_stats` rows of a database that `neuron-stats ingest` wrote into a
fresh database with the same tables and the same settings as `ingest` (16 KiB pages, no journal,
one transaction), and prints the time of each copy. The copy runs inside SQLite
(`INSERT INTO ... SELECT ... WHERE 1`; the WHERE keeps SQLite from copying whole records, so each
row is built column by column, as an INSERT of bound values is), so no Python and no
neuron-stats code is timed: this is what storing the rows costs whatever program does it.
"""
import os
import sqlite3
import sys
import tempfile
import time


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    src = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="ns-floor-") as tmp:
        dst = os.path.join(tmp, "copy.db")
        db = sqlite3.connect(dst, isolation_level=None)
        db.executescript("PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
                         "PRAGMA cache_size = -4096;")
        db.execute("ATTACH DATABASE ? AS src", (src,))
        db.execute("BEGIN")
        total = 0.0
        for table in ("events", "event_stats"):
            (sql,) = db.execute("SELECT sql FROM src.sqlite_master WHERE type = 'table' AND name = ?",
                                (table,)).fetchone()
            db.execute(sql)
            (rows,) = db.execute("SELECT count(*) FROM src.%s" % table).fetchone()
            start = time.perf_counter()
            db.execute("INSERT INTO main.%s SELECT * FROM src.%s WHERE 1" % (table, table))
            took = time.perf_counter() - start
            total += took
            print("%-12s %9d rows  %6.3f s  %5.2f us/row" % (table, rows, took, took / max(rows, 1) * 1e6))
        db.execute("COMMIT")
        print("%-12s %9s       %6.3f s" % ("total", "", total))


if __name__ == "__main__":
    main()
