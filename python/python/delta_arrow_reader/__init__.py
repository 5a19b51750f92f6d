"""Read Delta Lake tables into pyarrow.

Deletion vectors, column mapping, checkpoints of every kind and time travel; local paths,
``file://``, ``http(s)://`` (a static host), ``s3://``, Azure (``az://``, ``abfss://``, ...)
and ``gs://``; batches decoded on every core by the Rust core, while Python waits without
holding the GIL.

    >>> from delta_arrow_reader import DeltaTable
    >>> table = DeltaTable("path/to/table")
    >>> table.to_pyarrow(columns=["id", "name"], filter="year = 2024")
    >>> for batch in table.scan(batch_size=10_000):
    ...     ...

A table also hands its rows to any reader of the Arrow PyCapsule stream interface:
``polars.DataFrame(table)``, ``duckdb.sql("SELECT * FROM tbl")`` with ``tbl = table``.
"""

from __future__ import annotations

import datetime as _dt
import json as _json
import operator
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pyarrow as _pa

from ._native import DeltaError, RawDeltaTable, core_version

__all__ = ["DeltaTable", "DeltaError", "__version__"]

__version__ = core_version()

Timestamp = Union[str, _dt.datetime, _dt.date]


def _timestamp_text(at: Timestamp) -> str:
    """A timestamp as the core parses it; a naive datetime is taken as UTC."""
    if isinstance(at, str):
        return at
    if isinstance(at, _dt.datetime):
        if at.tzinfo is None:
            at = at.replace(tzinfo=_dt.timezone.utc)
        return at.isoformat()
    if isinstance(at, _dt.date):
        return at.isoformat()
    raise TypeError(f"timestamp must be a str, datetime or date, not {type(at).__name__}")


class DeltaTable:
    """A Delta table at one version (its latest unless ``version`` or ``timestamp`` is given).

    ``location`` is a local path or a URL. ``storage_options`` configure remote stores with
    object_store's names (``aws_region``, ``azure_storage_account_name``,
    ``google_service_account``, ``timeout``, ...); the clouds' standard environment variables
    fill in what they leave out. Failures raise :class:`DeltaError`, whose ``code`` names the
    kind (``not_a_table``, ``not_found``, ``io``, ``invalid_storage_options``, ...).
    """

    __slots__ = ("_raw", "_location", "_options")

    def __init__(
        self,
        location: Union[str, "os.PathLike[str]"],
        *,
        version: Optional[int] = None,
        timestamp: Optional[Timestamp] = None,
        storage_options: Optional[Mapping[str, str]] = None,
    ) -> None:
        version = _count("version", version)
        options = None
        if storage_options is not None:
            if not isinstance(storage_options, Mapping):
                raise TypeError(
                    "storage_options must be a mapping of option names to values, not "
                    f"{type(storage_options).__name__}"
                )
            options = {str(k): str(v) for k, v in storage_options.items()}
        self._location = _fspath(location)
        self._options = options
        self._raw = RawDeltaTable(
            self._location,
            version,
            None if timestamp is None else _timestamp_text(timestamp),
            options,
        )

    def __reduce__(self):
        # Pickled as where it is and which version: a process that unpickles it (a worker
        # of a process pool) loads that version itself. Storage options travel with it.
        return (_reopen, (self._location, self.version, self._options))

    @property
    def version(self) -> int:
        """The snapshot's version."""
        return self._raw.version()

    @property
    def location(self) -> str:
        """The table's location (credentials and query string removed)."""
        return self._raw.location()

    @property
    def schema(self) -> _pa.Schema:
        """The Arrow schema of the table's rows."""
        return self._raw.schema()

    @property
    def partition_columns(self) -> List[str]:
        """The partition columns, in order."""
        return self._raw.partition_columns()

    @property
    def timestamp(self) -> Optional[_dt.datetime]:
        """The snapshot's commit time (UTC), when the log says it."""
        ms = self._raw.timestamp_ms()
        if ms is None:
            return None
        return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc)

    def metadata(self) -> Dict[str, Any]:
        """The table's ``metaData`` action: id, name, description, partition columns,
        configuration (table properties) and creation time (ms since the epoch)."""
        return self._raw.metadata()

    def protocol(self) -> Dict[str, Any]:
        """The table's ``protocol`` action: reader and writer versions and features."""
        return self._raw.protocol()

    def files(self) -> List[Dict[str, Any]]:
        """The active data files: ``path`` (as the log names it), ``size``,
        ``partition_values``, ``modification_time``, ``num_records`` (from statistics, or
        None) and ``has_deletion_vector``."""
        return self._raw.files()

    def history(self, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """The table's commits up to its version, newest first (at most ``limit``), as
        ``DESCRIBE HISTORY`` shows them: ``version``, ``timestamp`` (a UTC datetime, or None),
        ``operation``, ``operation_parameters``, ``operation_metrics`` and ``commit_info``
        (the whole ``commitInfo``, or None). Commits removed by the log's cleanup are not in
        it."""
        limit = _count("limit", limit)
        out = []
        for entry in self._raw.history(limit):
            info = None if entry["commit_info"] is None else _json.loads(entry["commit_info"])
            ms = entry["timestamp"]
            out.append(
                {
                    "version": entry["version"],
                    "timestamp": None
                    if ms is None
                    else _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc),
                    "operation": entry["operation"],
                    "operation_parameters": (info or {}).get("operationParameters"),
                    "operation_metrics": (info or {}).get("operationMetrics"),
                    "commit_info": info,
                }
            )
        return out

    def scan(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        batch_size: Optional[int] = None,
        strings: str = "string",
        binaries: str = "binary",
    ) -> _pa.RecordBatchReader:
        """The table's rows as a ``pyarrow.RecordBatchReader``, decoded as they are read.

        ``columns`` picks and orders columns (default all); ``filter`` is a SQL-like
        predicate (``"year = 2024 and name in ('a', 'b') and price between 1 and 10"``;
        comparisons, ``and``/``or``/``not``, ``in``, ``between``, ``is [not] null``,
        ``date '2024-01-01'``, backticks around odd names): files, row groups and pages it
        rules out are not read, and only matching rows come out; ``limit`` caps the rows;
        ``batch_size`` sets the rows per batch; ``strings`` is ``"string"``,
        ``"large_string"`` or ``"string_view"`` and ``binaries`` ``"binary"``,
        ``"large_binary"`` or ``"binary_view"``. Rows come in no particular order.
        """
        if isinstance(columns, str):
            raise TypeError("columns must be a list of column names, not one string")
        if columns is not None and not all(isinstance(c, str) for c in columns):
            raise TypeError("columns must be a list of column names (str)")
        limit = _count("limit", limit)
        batch_size = _count("batch_size", batch_size)
        raw = self._raw.scan(
            None if columns is None else list(columns),
            filter,
            limit,
            batch_size,
            strings,
            binaries,
        )
        return _pa.RecordBatchReader.from_batches(raw.schema(), raw)

    def changes(
        self,
        starting_version: Optional[int] = None,
        columns: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        batch_size: Optional[int] = None,
        strings: str = "string",
        binaries: str = "binary",
        starting_timestamp: Optional[Timestamp] = None,
    ) -> _pa.RecordBatchReader:
        """The table's change data feed: the rows the commits from ``starting_version`` (or
        from the first version committed at or after ``starting_timestamp``) to this
        snapshot's version inserted, deleted or updated, commit by commit, as a
        ``pyarrow.RecordBatchReader``.

        Each row has the table's columns, then ``_change_type`` (``insert``, ``delete``,
        ``update_preimage``, ``update_postimage``), ``_commit_version`` and
        ``_commit_timestamp``. The table must have the feed enabled
        (``delta.enableChangeDataFeed``) over the whole range, with one schema; a range it
        cannot describe raises ``DeltaError`` (code ``change_data_feed_unavailable``) before
        any row is read. Open the table at a version (``DeltaTable(..., version=N)``) to end
        the range there. ``starting_timestamp`` takes what ``timestamp`` takes; a time after
        the snapshot's commit gives no rows. ``columns``, ``limit``, ``batch_size``,
        ``strings`` and ``binaries`` are as for :meth:`scan`.
        """
        if isinstance(columns, str):
            raise TypeError("columns must be a list of column names, not one string")
        if columns is not None and not all(isinstance(c, str) for c in columns):
            raise TypeError("columns must be a list of column names (str)")
        if (starting_version is None) == (starting_timestamp is None):
            raise TypeError("give starting_version or starting_timestamp (one of them)")
        start = _count("starting_version", starting_version)
        since = None if starting_timestamp is None else _timestamp_text(starting_timestamp)
        limit = _count("limit", limit)
        batch_size = _count("batch_size", batch_size)
        raw = self._raw.changes(
            start,
            since,
            None if columns is None else list(columns),
            limit,
            batch_size,
            strings,
            binaries,
        )
        return _pa.RecordBatchReader.from_batches(raw.schema(), raw)

    def to_pyarrow(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        strings: str = "string",
        binaries: str = "binary",
    ) -> _pa.Table:
        """The table's rows as one ``pyarrow.Table`` (see :meth:`scan` for the arguments)."""
        return self.scan(
            columns=columns, filter=filter, limit=limit, strings=strings, binaries=binaries
        ).read_all()

    def to_pandas(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        **to_pandas_kwargs: Any,
    ):
        """The table's rows as a ``pandas.DataFrame`` (needs pandas)."""
        return self.to_pyarrow(columns=columns, filter=filter, limit=limit).to_pandas(
            **to_pandas_kwargs
        )

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The whole table through the Arrow PyCapsule stream interface."""
        return self.scan().__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return self._raw.__repr__()


def _reopen(location: str, version: int, options: Optional[Dict[str, str]]) -> "DeltaTable":
    return DeltaTable(location, version=version, storage_options=options)


def _count(name: str, value: Any) -> Optional[int]:
    """`value` as an int of 0 or more (any integer type but bool), or None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if number < 0:
        raise ValueError(f"{name} must be 0 or more, not {number}")
    return number


def _fspath(location: Any) -> str:
    if isinstance(location, str):
        return location
    if isinstance(location, os.PathLike):
        return os.fspath(location)
    raise TypeError(f"location must be a str or a path, not {type(location).__name__}")
