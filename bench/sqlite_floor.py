#!/usr/bin/env python3
"""SQLite's own cost of storing an ingest's rows: the floor under `ingest`.

    python3 bench/sqlite_floor.py bench/out/out.db [--ingest-s SECONDS --events N]

Copies every table of a database that `neuron-stats ingest` wrote (its rows, in rowid order)
into a fresh database with the same tables and the same settings as `ingest` (16 KiB pages, no
journal, one transaction), then builds the same indexes, and prints the time of each step. The
copy runs inside SQLite (`INSERT INTO ... SELECT ... WHERE 1`; the WHERE keeps SQLite from copying
whole records, so each row is built column by column, as an INSERT of bound values is), so no
Python and no neuron-stats code is timed: this is what storing these rows costs whatever program
does it, on one core. With --ingest-s (the measured `ingest` time) and --events (the trace's
events), the last lines put the two side by side.
"""
import argparse
import os
import sqlite3
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description="SQLite's floor under an ingest's rows")
    ap.add_argument("db")
    ap.add_argument("--ingest-s", type=float, help="the measured ingest time, to compare")
    ap.add_argument("--events", type=int, help="the trace's events, for events/s")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ns-floor-") as tmp:
        db = sqlite3.connect(os.path.join(tmp, "copy.db"), isolation_level=None)
        db.executescript("PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
                         "PRAGMA cache_size = -4096;")
        db.execute("ATTACH DATABASE ? AS src", (a.db,))
        db.execute("BEGIN")
        schema = db.execute("SELECT type, name, sql FROM src.sqlite_master WHERE sql IS NOT NULL AND "
                            "type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' "
                            "ORDER BY type = 'index', rowid").fetchall()
        total = 0.0
        for kind, name, sql in schema:
            if kind == "table":
                db.execute(sql)
                (rows,) = db.execute('SELECT count(*) FROM src."%s"' % name).fetchone()
                step = 'INSERT INTO main."%s" SELECT * FROM src."%s" WHERE 1' % (name, name)
            else:
                rows, step = None, sql
            start = time.perf_counter()
            db.execute(step)
            took = time.perf_counter() - start
            total += took
            if rows is None:
                print("%-20s %9s        %6.3f s" % ("index " + name, "", took))
            elif rows:
                print("%-20s %9d rows  %6.3f s  %5.2f us/row" % (name, rows, took, took / rows * 1e6))
        db.execute("COMMIT")
        print("%-20s %9s       %6.3f s" % ("floor (all of it)", "", total))
        if a.events:
            print("%-20s %9s       %6.2f M events/s" % ("floor rate", "", a.events / total / 1e6))
        if a.ingest_s:
            print("%-20s %9s       %6.3f s = %.2fx the floor" % ("ingest", "", a.ingest_s, a.ingest_s / total))


if __name__ == "__main__":
    main()
