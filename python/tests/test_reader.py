"""The installed `delta_arrow_reader` wheel against the shared corpus.

Run by `scripts/test-python`, in a fresh virtual environment holding the wheel, pyarrow and
pandas, from a folder outside the source tree (so the installed package is what is tested).
The corpus is found at $DAR_CORPUS (default: ../shared/corpus from the project root).
"""

import csv
import datetime as dt
import decimal
import functools
import http.server
import math
import os
import pathlib
import threading
import unittest

import pyarrow as pa
import pyarrow.parquet as pq

import delta_arrow_reader as dar
from delta_arrow_reader import DeltaError, DeltaTable

CORPUS = pathlib.Path(
    os.environ.get(
        "DAR_CORPUS",
        pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus",
    )
).resolve()
TABLES = CORPUS / "tables"
EXPECTED = CORPUS / "expected"


def table(name):
    return str(TABLES / name)


def normalise(value):
    """A value comparable across Arrow types that mean the same (time zones, decimals)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return ("ts", value.isoformat())
    if isinstance(value, float):
        return ("f", "nan" if math.isnan(value) else repr(value))
    if isinstance(value, decimal.Decimal):
        return ("d", str(value.normalize()) if value == value else "nan")
    if isinstance(value, dict):
        return ("m", tuple(sorted((k, normalise(v)) for k, v in value.items())))
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            # A map as key/value pairs.
            return ("m", tuple(sorted((repr(k), normalise(v)) for k, v in value)))
        return ("l", tuple(normalise(v) for v in value))
    return ("v", repr(value))


def rows(tbl, columns):
    """The rows of `tbl` over `columns`, normalised, sorted (a multiset)."""
    data = [tbl.column(c).to_pylist() for c in columns]
    out = [tuple(normalise(col[i]) for col in data) for i in range(tbl.num_rows)]
    return sorted(out, key=repr)


def expected_tables():
    """(table, version or None, expected parquet files) for the corpus's expected results."""
    cases = []
    for folder in sorted(EXPECTED.iterdir()):
        name = folder.name
        direct = sorted(folder.glob("*.parquet"))
        if direct:
            cases.append((name, None, direct))
        for sub in sorted(folder.iterdir()):
            content = sub / "table_content"
            if sub.is_dir() and content.is_dir():
                version = None if sub.name == "latest" else int(sub.name.lstrip("v"))
                cases.append((name, version, sorted(content.glob("*.parquet"))))
    return cases


# Expected results whose files carry types the corpus's writer stored differently from the
# table's schema in ways a generic comparison cannot undo (INT96 timestamps of another time
# zone, variant): the Rust conformance suite compares these with its own rules.
SKIP_EXPECTED = {
    # Timestamp partition values written in the writer's zone (America/Los_Angeles).
    "golden__data-reader-partition-values",
    "golden__data-reader-date-types-America",
    "golden__data-reader-date-types-Etc",
    "golden__data-reader-date-types-Iceland",
    "golden__data-reader-date-types-Jst",
    "golden__data-reader-date-types-Pst",
    "kernel__unshredded-variant",
}


def inventory():
    with open(CORPUS / "INVENTORY.csv", newline="") as f:
        return list(csv.DictReader(f))


class ExpectedRows(unittest.TestCase):
    def test_every_expected_result(self):
        compared = 0
        for name, version, files in expected_tables():
            if name in SKIP_EXPECTED or not files:
                continue
            with self.subTest(table=name, version=version):
                expected = pa.concat_tables(
                    [pq.read_table(f) for f in files], promote_options="permissive"
                )
                got = DeltaTable(table(name), version=version).to_pyarrow()
                columns = expected.column_names
                self.assertEqual(got.num_rows, expected.num_rows)
                missing = set(columns) - set(got.column_names)
                self.assertFalse(missing, f"columns missing: {missing}")
                self.assertEqual(rows(got, columns), rows(expected, columns))
                compared += 1
        self.assertGreater(compared, 50)


class EveryTable(unittest.TestCase):
    def test_every_corpus_table_reads_or_raises_a_typed_error(self):
        negative = {
            r["name"] for r in inventory() if "negative" in r["kernel_rs_golden_status"]
        }
        read = 0
        for entry in inventory():
            name = entry["name"]
            with self.subTest(table=name):
                try:
                    t = DeltaTable(table(name))
                    n = sum(b.num_rows for b in t.scan())
                except DeltaError as e:
                    # Log-only tables (no data files) fail in the middle of the scan.
                    self.assertTrue(e.code, name)
                    self.assertIn(e.phase, ("load", "plan", "read"))
                    continue
                self.assertNotIn(name, negative, "a table that must fail was read")
                self.assertGreaterEqual(n, 0)
                read += 1
        self.assertGreater(read, 150)
        for name in negative:
            with self.assertRaises(DeltaError):
                DeltaTable(table(name)).to_pyarrow()


class Api(unittest.TestCase):
    def test_metadata_schema_files_and_time_travel(self):
        t = DeltaTable(table("dat__basic_partitioned"))
        self.assertEqual(t.partition_columns, ["letter"])
        self.assertIsInstance(t.schema, pa.Schema)
        self.assertIn("letter", t.schema.names)
        self.assertEqual(t.metadata()["partition_columns"], ["letter"])
        self.assertGreaterEqual(t.protocol()["min_reader_version"], 1)
        files = t.files()
        self.assertTrue(files and all("path" in f and f["size"] > 0 for f in files))
        self.assertIsInstance(t.timestamp, (dt.datetime, type(None)))
        self.assertIn("DeltaTable(", repr(t))
        old = DeltaTable(table("dat__basic_append"), version=0)
        self.assertEqual(old.version, 0)
        self.assertLess(
            old.to_pyarrow().num_rows, DeltaTable(table("dat__basic_append")).to_pyarrow().num_rows
        )

    def test_history(self):
        t = DeltaTable(table("deltars__checkpoints_vacuumed"))
        history = t.history()
        self.assertEqual([h["version"] for h in history], list(range(12, 4, -1)))
        self.assertEqual(history[0]["operation"], "WRITE")
        self.assertIsInstance(history[0]["timestamp"], dt.datetime)
        self.assertEqual(history[0]["operation_parameters"]["mode"], "Append")
        self.assertEqual(len(t.history(limit=2)), 2)
        self.assertEqual(
            [h["version"] for h in DeltaTable(table("dat__basic_append"), version=0).history()], [0]
        )
        with self.assertRaises(ValueError):
            t.history(limit=-1)

    def test_change_data_feed(self):
        t = DeltaTable(table("kernel__cdf-table"))
        feed = t.changes(0).read_all()
        self.assertEqual(
            feed.schema.names, ["id", "name", "birthday", "_change_type", "_commit_version", "_commit_timestamp"]
        )
        kinds = {}
        for kind, version in zip(
            feed.column("_change_type").to_pylist(), feed.column("_commit_version").to_pylist()
        ):
            kinds[(kind, version)] = kinds.get((kind, version), 0) + 1
        self.assertEqual(
            kinds,
            {
                ("insert", 0): 10,
                ("update_preimage", 1): 3,
                ("update_postimage", 1): 3,
                ("update_preimage", 2): 3,
                ("update_postimage", 2): 3,
                ("delete", 3): 1,
            },
        )
        versions = feed.column("_commit_version").to_pylist()
        self.assertEqual(versions, sorted(versions))
        self.assertIsInstance(feed.column("_commit_timestamp")[0].as_py(), dt.datetime)
        last = DeltaTable(table("kernel__cdf-table"), version=3).changes(3, columns=["id", "_change_type"])
        self.assertEqual(last.read_all().to_pylist(), [{"id": 7, "_change_type": "delete"}])
        self.assertEqual(t.changes(0, limit=5, batch_size=2).read_all().num_rows, 5)
        with self.assertRaises(DeltaError) as e:
            DeltaTable(table("dat__basic_append")).changes(0)
        self.assertEqual(e.exception.code, "change_data_feed_unavailable")
        with self.assertRaises(DeltaError) as e:
            DeltaTable(table("kernel__cdf-table"), version=1).changes(2)
        self.assertEqual(e.exception.code, "invalid_argument")
        with self.assertRaises(ValueError):
            t.changes(-1)
        with self.assertRaises(TypeError):
            t.changes("0")
        with self.assertRaises(TypeError):
            t.changes()
        since = t.changes(starting_timestamp=dt.datetime(2000, 1, 1)).read_all()
        self.assertEqual(since.num_rows, 23)
        self.assertEqual(t.changes(starting_timestamp="2999-01-01").read_all().num_rows, 0)

    def test_timestamps_as_text_datetime_and_date(self):
        name = table("golden__time-travel-start-start20-start40")
        latest = DeltaTable(name)
        for at in ["2100-01-01", dt.datetime(2100, 1, 1), dt.date(2100, 1, 1),
                   dt.datetime(2100, 1, 1, tzinfo=dt.timezone.utc)]:
            self.assertEqual(DeltaTable(name, timestamp=at).version, latest.version)
        with self.assertRaises(DeltaError) as e:
            DeltaTable(name, timestamp="1970-01-01")
        self.assertEqual(e.exception.code, "timestamp_not_found")
        with self.assertRaises(ValueError):
            DeltaTable(name, version=0, timestamp="2100-01-01")

    def test_scan_options(self):
        t = DeltaTable(table("dat__basic_partitioned"))
        full = t.to_pyarrow()
        some = t.to_pyarrow(columns=["number", "letter"], filter="letter = 'a'")
        self.assertEqual(some.column_names, ["number", "letter"])
        self.assertEqual(set(some.column("letter").to_pylist()), {"a"})
        self.assertEqual(
            some.num_rows, sum(1 for v in full.column("letter").to_pylist() if v == "a")
        )
        self.assertEqual(t.to_pyarrow(limit=2).num_rows, 2)
        batches = list(t.scan(batch_size=1))
        self.assertEqual(sum(b.num_rows for b in batches), full.num_rows)
        self.assertTrue(all(b.num_rows <= 1 for b in batches))
        for strings, arrow in [("string", pa.string()), ("large_string", pa.large_string()),
                               ("string_view", pa.string_view())]:
            got = t.to_pyarrow(columns=["letter"], strings=strings)
            self.assertEqual(got.schema.field("letter").type, arrow)
        with self.assertRaises(ValueError):
            t.scan(strings="utf16")
        with self.assertRaises(ValueError):
            t.scan(batch_size=0)
        with self.assertRaises(TypeError):
            t.scan(columns="letter")
        with self.assertRaises(DeltaError) as e:
            t.to_pyarrow(columns=["no_such_column"])
        self.assertTrue(e.exception.code)
        with self.assertRaises(DeltaError) as e:
            t.to_pyarrow(filter="letter = = 'a'")
        self.assertTrue(e.exception.code)

    def test_deletion_vectors_and_column_mapping(self):
        dv = DeltaTable(table("golden__dv-partitioned-with-checkpoint")).to_pyarrow()
        self.assertEqual(dv.num_rows, 35)
        cm = DeltaTable(table("golden__table-with-columnmapping-mode-name")).to_pyarrow()
        self.assertGreater(cm.num_rows, 0)

    def test_pandas_and_the_pycapsule_stream(self):
        t = DeltaTable(table("dat__basic_append"))
        df = t.to_pandas()
        self.assertEqual(len(df), t.to_pyarrow().num_rows)
        via_capsule = pa.table(t)
        self.assertEqual(via_capsule.num_rows, len(df))
        reader = pa.RecordBatchReader.from_stream(t)
        self.assertEqual(reader.read_all().num_rows, len(df))

    def test_errors_are_typed(self):
        with self.assertRaises(DeltaError) as e:
            DeltaTable(str(TABLES / "no-such-table"))
        self.assertEqual(e.exception.code, "not_a_table")
        self.assertEqual(e.exception.phase, "load")
        self.assertIsInstance(e.exception, Exception)
        with self.assertRaises(DeltaError) as e:
            DeltaTable(table("dat__basic_append"), version=999)
        self.assertEqual(e.exception.code, "version_not_found")
        with self.assertRaises(DeltaError) as e:
            DeltaTable("s3://bucket/t", storage_options={"aws_no_such": "secret-value"})
        self.assertEqual(e.exception.code, "invalid_storage_options")
        self.assertNotIn("secret-value", str(e.exception))
        with self.assertRaises(TypeError):
            DeltaTable(table("dat__basic_append"), version="1")
        with self.assertRaises(TypeError):
            DeltaTable(42)

    def test_arguments_of_any_integer_type_and_clear_refusals(self):
        t = DeltaTable(table("dat__basic_append"), version=_Int(0))
        self.assertEqual(t.version, 0)
        self.assertEqual(DeltaTable(table("dat__basic_append")).to_pyarrow(limit=_Int(1)).num_rows, 1)
        for bad in [dict(version=-1), dict(version=True)]:
            with self.assertRaises((ValueError, TypeError)):
                DeltaTable(table("dat__basic_append"), **bad)
        t = DeltaTable(table("dat__basic_append"))
        for bad in [dict(limit=-1), dict(batch_size=-5), dict(limit=True), dict(columns=[None])]:
            with self.assertRaises((ValueError, TypeError)):
                t.scan(**bad)
        with self.assertRaises(TypeError):
            DeltaTable(table("dat__basic_append"), storage_options=[("a", "b")])

    def test_tables_and_errors_pickle(self):
        import pickle

        t = DeltaTable(table("golden__dv-partitioned-with-checkpoint"))
        again = pickle.loads(pickle.dumps(t))
        self.assertEqual((again.version, again.to_pyarrow().num_rows), (t.version, 35))
        try:
            DeltaTable(str(TABLES / "no-such-table"))
        except DeltaError as e:
            copy = pickle.loads(pickle.dumps(e))
            self.assertIsInstance(copy, DeltaError)
            self.assertEqual((copy.code, copy.phase), ("not_a_table", "load"))
        self.assertEqual(DeltaError.__module__, "delta_arrow_reader")

    def test_path_objects(self):
        t = DeltaTable(TABLES / "dat__basic_append")
        self.assertGreater(t.to_pyarrow().num_rows, 0)


class Threads(unittest.TestCase):
    def test_tables_read_from_several_threads_at_once(self):
        name = table("golden__dv-partitioned-with-checkpoint")
        results, errors = [], []

        def read():
            try:
                results.append(DeltaTable(name).to_pyarrow().num_rows)
            except Exception as e:  # collected, then asserted below
                errors.append(e)

        threads = [threading.Thread(target=read) for _ in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        self.assertEqual(errors, [])
        self.assertEqual(results, [35] * 8)

    def test_an_error_in_the_middle_of_a_scan_is_a_delta_error(self):
        t = DeltaTable(table("kernel__app-txn-with-last-updated"))
        with self.assertRaises(DeltaError) as e:
            t.to_pyarrow()
        self.assertEqual(e.exception.code, "not_found")
        self.assertEqual(e.exception.phase, "read")

    def test_a_reader_dropped_early_stops_cleanly(self):
        t = DeltaTable(table("kernel__v2-checkpoints-parquet-with-sidecars"))
        for _ in range(20):
            reader = t.scan(batch_size=10)
            first = reader.read_next_batch()
            self.assertLessEqual(first.num_rows, 10)
            del reader
        self.assertGreater(t.to_pyarrow().num_rows, 0)


class Fork(unittest.TestCase):
    def test_a_forked_child_reads_tables_with_threads_of_its_own(self):
        import multiprocessing

        name = table("golden__dv-partitioned-with-checkpoint")
        self.assertEqual(DeltaTable(name).to_pyarrow().num_rows, 35)
        open_before_fork = DeltaTable(name)
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(2) as pool:
            counts = pool.map(_rows_in, [name] * 4)
        self.assertEqual(counts, [35] * 4)
        self.assertEqual(open_before_fork.to_pyarrow().num_rows, 35)


class Interrupt(unittest.TestCase):
    def test_ctrl_c_stops_a_read_that_waits(self):
        """A server that accepts and never answers: SIGINT ends the load at once."""
        import signal
        import socket
        import time

        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        timer = threading.Timer(0.5, lambda: signal.raise_signal(signal.SIGINT))
        started = time.monotonic()
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                DeltaTable(f"http://127.0.0.1:{port}/t")
        finally:
            timer.cancel()
            listener.close()
        self.assertLess(time.monotonic() - started, 5)


class _Int:
    """An integer type that is not int (as numpy's are)."""

    def __init__(self, n):
        self.n = n

    def __index__(self):
        return self.n


def _rows_in(name):
    return DeltaTable(name).to_pyarrow().num_rows


class OverHttp(unittest.TestCase):
    """A table behind Python's own static server (which ignores Range headers)."""

    def test_reads_over_http(self):
        handler = functools.partial(
            http.server.SimpleHTTPRequestHandler, directory=str(TABLES)
        )

        class Quiet(handler.func):
            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Quiet, directory=str(TABLES))
        )
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            port = server.server_address[1]
            for name in ["dat__basic_partitioned", "golden__dv-partitioned-with-checkpoint"]:
                remote = DeltaTable(f"http://127.0.0.1:{port}/{name}").to_pyarrow()
                local = DeltaTable(table(name)).to_pyarrow()
                self.assertEqual(rows(remote, local.column_names), rows(local, local.column_names))
        finally:
            server.shutdown()


if __name__ == "__main__":
    unittest.main()
