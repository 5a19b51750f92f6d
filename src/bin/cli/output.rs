//! Where `dar export` writes: standard output (`-`, `/dev/stdout`) or another inherited
//! descriptor (`/dev/stderr`, `/dev/fd/N`), a special file written in place (a device such as
//! `/dev/null`, a FIFO), or a regular file replaced only once the export has succeeded.
//!
//! A regular file (new or existing) is written through a temporary file beside it, created
//! exclusively (`O_CREAT | O_EXCL`: a planted file or link of that name is never opened or
//! followed), removed on every failure and renamed over the target at the end, so a failed
//! export leaves the target as it was. A symbolic link as the target is resolved first: the
//! file it points to is replaced and the link stays. A rename never replaces anything but a
//! regular file; a special file keeps its kind because it is opened and written, never
//! created or renamed over; a directory is refused. An interrupt (Ctrl-C, SIGTERM) removes
//! the temporary file before the process ends by that signal. The temporary file is locked
//! while it is written; one left unlocked by an export that could not clean up (killed by
//! `SIGKILL`) is removed by the next export to the same target.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use delta_arrow_reader::{DeltaError, Phase};

/// An I/O error on the export's output.
pub fn io_error(path: &Path, e: impl std::fmt::Display) -> DeltaError {
    DeltaError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
        phase: Phase::Read,
        transient: false,
    }
}

/// The temporary file being written (or `dar sql`'s spill folder), removed by the interrupt
/// handler.
static PARTIAL: Mutex<Option<PathBuf>> = Mutex::new(None);

fn set_partial(path: Option<PathBuf>) {
    if let Ok(mut p) = PARTIAL.lock() {
        *p = path;
    }
}

/// Installs the interrupt handler (once per process; a second call is a no-op): on SIGINT,
/// SIGTERM or SIGHUP it removes the temporary file, then ends the process by the same signal
/// with its default action, so the caller sees the signal (a shell prints 130, 143, 129).
fn remove_partial_on_interrupt() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            // Without a handler a signal still ends the process; only the clean-up is lost.
            let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("dar-signals".into())
                .spawn(move || {
                    if let Some(signal) = signals.forever().next() {
                        remove_registered();
                        super::terminal::message("\ndar: interrupted");
                        let _ = signal_hook::low_level::emulate_default_handler(signal);
                        // Not reached when the default action ends the process.
                        std::process::exit(128 + signal);
                    }
                });
        }
    });
}

/// Removes `dir` (and all in it) if the process is interrupted (SIGINT, SIGTERM, SIGHUP)
/// before [`remove_registered`] does: `dar sql`'s spill folder, which an interrupted query
/// would otherwise leave behind (hundreds of MB).
#[cfg(feature = "datafusion")]
pub fn remove_on_interrupt(dir: PathBuf) {
    remove_partial_on_interrupt();
    set_partial(Some(dir));
}

/// Removes now what [`remove_on_interrupt`] registered (at the end of `dar sql`), if
/// anything, and forgets it.
pub fn remove_registered() {
    let taken = PARTIAL.lock().ok().and_then(|mut p| p.take());
    if let Some(path) = taken {
        if path.is_dir() {
            let _ = std::fs::remove_dir_all(path);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What the bytes of an export go to.
pub type Sink = Box<dyn Write + Send>;

/// An open output of an export: what ends it (or, dropped unfinished, undoes it).
pub struct Output {
    /// Whether the bytes go to a terminal.
    pub is_terminal: bool,
    commit: Commit,
    /// Set when a write found the pipe or FIFO closed by its reader.
    reader_closed: Arc<AtomicBool>,
    /// Whether the output is an inherited descriptor (`-`, `/dev/fd/N`), whose reader may
    /// stop early (`| head`) with all it wanted, rather than a FIFO named by its path.
    inherited: bool,
}

enum Commit {
    /// Nothing to do at the end: stdout or a special file, written in place.
    InPlace,
    /// Rename `temp` over `target` at the end; remove `temp` on failure.
    Rename { temp: PathBuf, target: PathBuf },
}

impl Output {
    /// Opens the output named `out` (`-` is standard output): where to write, and the
    /// handle that ends the export.
    pub fn open(out: &Path) -> Result<(Sink, Self), DeltaError> {
        use std::io::IsTerminal;
        match descriptor(out) {
            Some(0) => return Err(io_error(out, "standard input is not an output")),
            Some(n @ (1 | 2)) if closed_at_start(n) => {
                return Err(io_error(
                    out,
                    format!(
                        "descriptor {n} was closed when dar started (`{n}>&-`): nothing \
                         written there would arrive"
                    ),
                ))
            }
            Some(n) if !writable_descriptor(n) => {
                return Err(io_error(
                    out,
                    format!("descriptor {n} is not open for writing (not open, or read-only)"),
                ))
            }
            Some(1) => {
                let stdout = std::io::stdout();
                let is_terminal = stdout.is_terminal();
                return Ok(Self::in_place(stdout, is_terminal, true));
            }
            Some(2) => {
                let stderr = std::io::stderr();
                let is_terminal = stderr.is_terminal();
                return Ok(Self::in_place(stderr, is_terminal, true));
            }
            Some(n) => {
                // Another inherited descriptor (`3>>log`, `>(gzip > x.gz)`): opened again
                // through its name and appended to, never truncated, created or renamed over.
                let file = OpenOptions::new()
                    .append(true)
                    .open(format!("/dev/fd/{n}"))
                    .map_err(|e| io_error(out, e))?;
                let is_terminal = file.is_terminal();
                return Ok(Self::in_place(file, is_terminal, true));
            }
            None => {}
        }
        let target = resolve(out)?;
        match std::fs::metadata(&target) {
            Ok(meta) if meta.is_dir() => Err(io_error(out, "is a directory")),
            Ok(meta) if !meta.is_file() => {
                // A device, FIFO or socket: written in place, never replaced.
                let file = OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(|e| io_error(out, e))?;
                let is_terminal = std::io::IsTerminal::is_terminal(&file);
                Ok(Self::in_place(file, is_terminal, false))
            }
            Ok(meta) if meta.permissions().readonly() => Err(io_error(
                out,
                "the file is write-protected (no write permission for anyone): it is not \
                 replaced; make it writable (chmod u+w) or choose another path",
            )),
            Ok(meta) => Self::replacing(target, Some(meta.permissions())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::replacing(target, None),
            Err(e) => Err(io_error(out, e)),
        }
    }

    /// Standard output or a special file, written in place, its closing by the reader noted;
    /// `inherited` for a descriptor the command was given (see [`Output::ends_quietly`]).
    fn in_place(
        sink: impl Write + Send + 'static,
        is_terminal: bool,
        inherited: bool,
    ) -> (Sink, Self) {
        let reader_closed = Arc::new(AtomicBool::new(false));
        let sink = PipeWatch {
            inner: sink,
            closed: Arc::clone(&reader_closed),
        };
        let output = Output {
            is_terminal,
            commit: Commit::InPlace,
            reader_closed,
            inherited,
        };
        (Box::new(sink), output)
    }

    /// A temporary file beside `target`, renamed over it by [`finish`](Self::finish).
    fn replacing(
        target: PathBuf,
        permissions: Option<std::fs::Permissions>,
    ) -> Result<(Sink, Self), DeltaError> {
        remove_partial_on_interrupt();
        let (temp, file) = create_temp(&target)?;
        set_partial(Some(temp.clone()));
        if let Some(p) = permissions {
            // The replaced file's mode is kept; failing to copy it is not worth an error.
            let _ = file.set_permissions(p);
        }
        let output = Output {
            is_terminal: false,
            commit: Commit::Rename { temp, target },
            reader_closed: Arc::default(),
            inherited: false,
        };
        Ok((Box::new(file), output))
    }

    /// Whether the reader of the pipe or FIFO written in place closed it before the end.
    pub fn reader_closed(&self) -> bool {
        self.reader_closed.load(Ordering::Relaxed)
    }

    /// Whether a failed export ends quietly: the reader of the pipe the command was given
    /// closed it (`dar export ... --out - | head`) and has what it wanted. A FIFO named by
    /// its path whose reader went away holds a cut export: that is an error.
    pub fn ends_quietly(&self) -> bool {
        self.inherited && self.reader_closed()
    }

    /// Ends a successful export: the temporary file (if any) replaces the target.
    pub fn finish(mut self) -> Result<(), DeltaError> {
        match std::mem::replace(&mut self.commit, Commit::InPlace) {
            Commit::InPlace => Ok(()),
            Commit::Rename { temp, target } => {
                let renamed = std::fs::rename(&temp, &target).map_err(|e| io_error(&target, e));
                if renamed.is_err() {
                    let _ = std::fs::remove_file(&temp);
                }
                // After the rename: an interrupt in between finds nothing left to remove.
                set_partial(None);
                renamed
            }
        }
    }
}

/// A sink that notes a write refused because the reader closed the pipe (`EPIPE`).
struct PipeWatch<W> {
    inner: W,
    closed: Arc<AtomicBool>,
}

impl<W> PipeWatch<W> {
    fn note<T>(&self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                self.closed.store(true, Ordering::Relaxed);
            }
        }
        result
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let result = self.inner.write(buf);
        self.note(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.inner.flush();
        self.note(result)
    }
}

impl Drop for Output {
    /// An export that did not finish leaves nothing behind.
    fn drop(&mut self) {
        if let Commit::Rename { temp, .. } = &self.commit {
            set_partial(None);
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// The inherited descriptor `out` leads to: `-` is 1; otherwise the path, made absolute and
/// normalised (`.`, `..`, repeated `/`), with symbolic links followed one at a time, until
/// it is `/dev/stdin` (0), `/dev/stdout` (1), `/dev/stderr` (2), `/dev/fd/N` or
/// `/proc/self/fd/N` (N). Such a name is a link to whatever the descriptor is open on (often
/// the file the shell redirected to, or a pipe), which must be written through the
/// descriptor: replacing that file would lose what the shell wrote there before (`>>`), and
/// following the link of a pipe leads nowhere.
fn descriptor(out: &Path) -> Option<u32> {
    if out.as_os_str() == "-" {
        return Some(1);
    }
    let mut path = normalised(&std::path::absolute(out).ok()?);
    for _ in 0..40 {
        if let Some(n) = descriptor_name(&path) {
            return Some(n);
        }
        let target = std::fs::read_link(&path).ok()?;
        let base = path
            .parent()
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
        path = normalised(&base.join(target));
    }
    None
}

/// The descriptor an absolute, normalised path names directly, if it names one.
fn descriptor_name(path: &Path) -> Option<u32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdin" => return Some(0),
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let own = format!("/proc/{}/fd/", std::process::id());
    [
        "/dev/fd/",
        "/proc/self/fd/",
        "/proc/thread-self/fd/",
        own.as_str(),
    ]
    .iter()
    .find_map(|prefix| text.strip_prefix(prefix))
    .and_then(|n| n.parse().ok())
}

/// `path` with `.` and `..` resolved and repeated separators dropped, by its text alone.
fn normalised(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The access mode of descriptor `n` (`O_ACCMODE` of its flags: `O_RDONLY` 0, `O_WRONLY` 1,
/// `O_RDWR` 2), on Linux from `/proc/self/fdinfo`: `Err` when the descriptor is not open,
/// `Ok(None)` when that cannot be told.
fn access_mode(n: u32) -> Result<Option<u32>, ()> {
    match std::fs::read_to_string(format!("/proc/self/fdinfo/{n}")) {
        Ok(info) => Ok(info
            .lines()
            .find_map(|line| line.strip_prefix("flags:"))
            .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
            .map(|flags| flags & 3)),
        // No such descriptor here, or no /proc at all.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if Path::new("/proc/self/fdinfo").is_dir() {
                Err(())
            } else {
                Ok(None)
            }
        }
        Err(_) => Ok(None),
    }
}

/// Whether descriptor `n` is open for writing (where that cannot be told, it is taken to be).
fn writable_descriptor(n: u32) -> bool {
    access_mode(n).is_ok_and(|mode| mode.is_none_or(|m| m != 0))
}

/// Whether standard descriptor `n` was closed when the process started (`>&-`): the Rust
/// runtime then opens `/dev/null` read-write in its place, where a shell's `>/dev/null`
/// opens it write-only.
fn closed_at_start(n: u32) -> bool {
    access_mode(n) == Ok(Some(2))
        && std::fs::read_link(format!("/proc/self/fd/{n}"))
            .is_ok_and(|target| target == Path::new("/dev/null"))
}

/// `out` with a symbolic link (at its last component) followed; a dangling link is refused.
fn resolve(out: &Path) -> Result<PathBuf, DeltaError> {
    match std::fs::symlink_metadata(out) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(out)
            .map_err(|e| io_error(out, format!("cannot follow the symbolic link: {e}"))),
        _ => Ok(out.to_path_buf()),
    }
}

/// Creates `temp`, new (`O_EXCL`), and holds an exclusive lock on it while it is open: the
/// mark of a temporary file still being written (see [`remove_if_stale`]).
fn create_locked(temp: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new().write(true).create_new(true).open(temp)?;
    // Where the file system has no locks, the file is used unlocked: it is then never taken
    // for stale, as before there were locks.
    let _ = file.try_lock();
    Ok(file)
}

/// Removes the temporary file `temp` when it is left from an export that ended without
/// cleaning up (killed by `SIGKILL`, the machine stopped): a regular file that no process
/// holds locked. Locks go with their process, so an export still running keeps its file
/// (locked since [`create_locked`]). Anything else at that name (a link, a folder, a file
/// that cannot be opened or locked, one swapped in meanwhile) is left alone.
#[cfg(unix)]
fn remove_if_stale(temp: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(seen) = std::fs::symlink_metadata(temp) else {
        return false;
    };
    if !seen.file_type().is_file() {
        return false;
    }
    let Ok(file) = OpenOptions::new().write(true).open(temp) else {
        return false;
    };
    // The file opened is the one looked at (not a link put there in between).
    let same = file
        .metadata()
        .is_ok_and(|opened| opened.dev() == seen.dev() && opened.ino() == seen.ino());
    if !same || file.try_lock().is_err() {
        return false;
    }
    std::fs::remove_file(temp).is_ok()
}

/// Elsewhere a file's identity is not checked here: a temporary file found is left alone.
#[cfg(not(unix))]
fn remove_if_stale(_temp: &Path) -> bool {
    false
}

/// Creates a new, exclusively owned temporary file in the folder of `target`.
fn create_temp(target: &Path) -> Result<(PathBuf, File), DeltaError> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| io_error(target, "not a file name"))?;
    for attempt in 0..100u32 {
        let temp = match attempt {
            0 => dir.join(format!(".{name}.dar-partial")),
            n => dir.join(format!(".{name}.dar-partial-{n}")),
        };
        match create_locked(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if remove_if_stale(&temp) {
                    if let Ok(file) = create_locked(&temp) {
                        return Ok((temp, file));
                    }
                }
                continue;
            }
            // Named by the target, not by the temporary file the user never asked for.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(io_error(
                    target,
                    format!("its folder {} does not exist", dir.display()),
                ))
            }
            Err(e) => return Err(io_error(target, format!("cannot create it beside: {e}"))),
        }
    }
    Err(io_error(
        target,
        "cannot create a temporary file beside it (100 names taken)",
    ))
}
