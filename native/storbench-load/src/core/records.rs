//! The per-request records (`--records FILE`): CSV rows under a header line, zstd-compressed,
//! streamed to the file while the run goes. Each worker fills its own small buffer and hands it to
//! the shared encoder when full, so memory stays bounded (workers × `CHUNK`) however long the run;
//! the file is the same single zstd frame as when the rows were all written at the end.

use super::Error;
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub const HEADER: &str = "intended_us,op,key,latency_us,service_us,bytes,status\n";

/// Bytes of rows a worker keeps before handing them to the file.
pub const CHUNK: usize = 64 << 10;

/// The records file being written; workers write to it through `writer()`.
pub struct Records {
    path: PathBuf,
    /// The encoder, and the first write error (later rows are dropped; `finish` reports it).
    out: Mutex<(zstd::Encoder<'static, File>, Option<io::Error>)>,
}

impl Records {
    /// Creates the file with its header (before the load starts: a bad path fails the run first).
    pub fn create(path: &Path) -> Result<Self, Error> {
        let open = || -> io::Result<zstd::Encoder<'static, File>> {
            let mut enc = zstd::Encoder::new(File::create(path)?, 3)?;
            enc.write_all(HEADER.as_bytes())?;
            Ok(enc)
        };
        let enc = open().map_err(|source| io_error(path, source))?;
        Ok(Records { path: path.to_path_buf(), out: Mutex::new((enc, None)) })
    }

    /// One worker's buffered writer; it hands its rows on when its buffer is full and when dropped.
    pub fn writer(&self) -> RecordWriter<'_> {
        RecordWriter { records: self, buf: Vec::with_capacity(CHUNK + 256) }
    }

    fn append(&self, rows: &[u8]) {
        let mut out = self.out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if out.1.is_none() {
            if let Err(e) = out.0.write_all(rows) {
                out.1 = Some(e);
            }
        }
    }

    /// Ends the compressed stream; the first error of the whole run, if any.
    pub fn finish(self) -> Result<(), Error> {
        let (enc, failed) = self.out.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        match failed {
            Some(source) => Err(io_error(&self.path, source)),
            None => enc.finish().map(drop).map_err(|source| io_error(&self.path, source)),
        }
    }
}

fn io_error(path: &Path, source: io::Error) -> Error {
    Error::Io { what: format!("cannot write records {}", path.display()), source }
}

/// One request, as its row says it (the header's columns).
pub struct Row<'a> {
    pub intended_us: u128,
    pub op: &'a str,
    pub key: u64,
    pub latency_us: u64,
    pub service_us: u128,
    pub bytes: u64,
    pub status: &'a str,
}

/// A worker's rows on their way to the file.
pub struct RecordWriter<'a> {
    records: &'a Records,
    buf: Vec<u8>,
}

impl RecordWriter<'_> {
    /// One request's row.
    pub fn row(&mut self, r: Row) {
        writeln!(
            self.buf,
            "{},{},{},{},{},{},{}",
            r.intended_us, r.op, r.key, r.latency_us, r.service_us, r.bytes, r.status
        )
        .ok();
        if self.buf.len() >= CHUNK {
            self.flush();
        }
    }

    /// Bytes held here, not yet handed to the file.
    #[cfg(test)]
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    fn flush(&mut self) {
        if !self.buf.is_empty() {
            self.records.append(&self.buf);
            self.buf.clear();
        }
    }
}

impl Drop for RecordWriter<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("storbench-load-records-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn rows_reach_the_file_while_the_run_goes_and_memory_stays_bounded() {
        let dir = scratch("stream");
        let path = dir.join("ops.zst");
        let records = Records::create(&path).unwrap();
        let rows = 200_000u64;
        std::thread::scope(|scope| {
            for worker in 0..4u64 {
                let records = &records;
                scope.spawn(move || {
                    let mut writer = records.writer();
                    for n in 0..rows / 4 {
                        let key = n * 4 + worker;
                        writer.row(Row {
                            intended_us: key as u128 * 7,
                            op: "put",
                            key,
                            latency_us: key % 9973,
                            service_us: (key % 997) as u128,
                            bytes: 4096,
                            status: "ok",
                        });
                        assert!(writer.buffered() < CHUNK, "{}", writer.buffered());
                    }
                });
            }
        });
        // every row handed on, the stream not yet finished: most of it is already on disk
        let before_finish = std::fs::metadata(&path).unwrap().len();
        records.finish().unwrap();
        let after_finish = std::fs::metadata(&path).unwrap().len();
        assert!(before_finish > after_finish / 2, "{before_finish} of {after_finish} bytes on disk before the end");
        let text = String::from_utf8(zstd::decode_all(File::open(&path).unwrap()).unwrap()).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(HEADER.trim_end()));
        let mut keys: Vec<u64> = lines.map(|l| l.split(',').nth(2).unwrap().parse().unwrap()).collect();
        keys.sort_unstable();
        assert_eq!(keys, (0..rows).collect::<Vec<_>>());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_path_that_cannot_be_written_fails_before_the_load() {
        let err = Records::create(Path::new("/nonexistent-dir/ops.zst")).err().unwrap().to_string();
        assert!(err.starts_with("cannot write records /nonexistent-dir/ops.zst: "), "{err}");
    }
}
