//! Reading the files a scenario names (and scenario files themselves): regular files only,
//! and never more than a stated size. A device (`/dev/zero`) would otherwise be read until
//! memory runs out, and a FIFO would block the run for ever.

use std::io::Read;
use std::path::Path;

/// Bytes of a scenario file.
pub const SCENARIO_BYTES: u64 = 256 << 20;

/// What a file that is not a regular file is, for a message.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    // Opening a FIFO for reading waits for a writer; without blocking it returns at once,
    // and the type check below refuses it.
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    o.open(path)
}

/// The text of `path` if it is a regular file of at most `cap` bytes in UTF-8; otherwise a
/// message (without the file's contents) saying why not. `what` names the file ("trace").
pub fn read_text(path: &Path, cap: u64, what: &str) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read \"{shown}\": {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{what} \"{shown}\" is {}; a {what} is a regular file",
            kind_of(&meta)
        ));
    }
    let too_big = |len: u64| {
        format!(
            "{what} \"{shown}\" has {len} bytes or more, beyond the {cap} bytes a {what} may have"
        )
    };
    if meta.len() > cap {
        return Err(too_big(meta.len()));
    }
    let file = open_nonblocking(path).map_err(|e| format!("cannot read \"{shown}\": {e}"))?;
    // The path may name another file by now: check what was opened.
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read \"{shown}\": {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{what} \"{shown}\" is {}; a {what} is a regular file",
            kind_of(&meta)
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(cap) as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read \"{shown}\": {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{what} \"{shown}\" is not UTF-8 text (byte {} is not)",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_fifos_and_directories_are_refused_without_reading() {
        let e = read_text(Path::new("/dev/zero"), 1 << 20, "trace").unwrap_err();
        assert!(e.contains("is a character device"), "{e}");
        let e = read_text(Path::new("/"), 1 << 20, "trace").unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("ecnlab-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads one NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, 1 << 20, "trace").unwrap_err();
        assert!(e.contains("is a FIFO"), "{e}");
        let big = dir.join("big");
        std::fs::write(&big, vec![b'1'; 1001]).unwrap();
        let e = read_text(&big, 1000, "trace").unwrap_err();
        assert!(e.contains("beyond the 1000 bytes"), "{e}");
        assert_eq!(read_text(&big, 1001, "trace").unwrap().len(), 1001);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
