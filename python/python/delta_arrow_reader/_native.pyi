"""Types of the extension module behind `delta_arrow_reader` (use the package's API)."""

from typing import Any, Dict, Iterator, List, Optional

import pyarrow

class DeltaError(Exception):
    """A Delta table could not be read."""

    code: str
    """The kind: `not_a_table`, `not_found`, `version_not_found`, `io`, ..."""
    phase: str
    """Where it happened: `load`, `plan` or `read`."""
    transient: bool
    """Whether retrying the same request may succeed."""

class RawScan(Iterator[pyarrow.RecordBatch]):
    def schema(self) -> pyarrow.Schema: ...
    def __iter__(self) -> "RawScan": ...
    def __next__(self) -> pyarrow.RecordBatch: ...
    def close(self) -> None: ...

class RawDeltaTable:
    def __init__(
        self,
        location: str,
        version: Optional[int] = None,
        timestamp: Optional[str] = None,
        storage_options: Optional[Dict[str, str]] = None,
    ) -> None: ...
    def version(self) -> int: ...
    def location(self) -> str: ...
    def timestamp_ms(self) -> Optional[int]: ...
    def schema(self) -> pyarrow.Schema: ...
    def partition_columns(self) -> List[str]: ...
    def metadata(self) -> Dict[str, Any]: ...
    def protocol(self) -> Dict[str, Any]: ...
    def files(self) -> List[Dict[str, Any]]: ...
    def history(self, limit: Optional[int] = None) -> List[Dict[str, Any]]: ...
    def scan(
        self,
        columns: Optional[List[str]] = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        batch_size: Optional[int] = None,
        strings: str = "string",
        binaries: str = "binary",
    ) -> RawScan: ...
    def changes(
        self,
        start: Optional[int] = None,
        since: Optional[str] = None,
        columns: Optional[List[str]] = None,
        limit: Optional[int] = None,
        batch_size: Optional[int] = None,
        strings: str = "string",
        binaries: str = "binary",
    ) -> RawScan: ...

def core_version() -> str: ...
