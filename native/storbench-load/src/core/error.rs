//! Fatal errors: what ends a run (or a merge) before it produced a result. The result file
//! carries the first line of one of these in "fatal". Errors of single requests are not here:
//! they are counted in the result by kind (see `OpFailure`).

use std::fmt;
use std::io;
use std::path::PathBuf;

/// The job document is unreadable or asks for something the engine cannot do.
#[derive(Debug)]
pub enum JobError {
    Read {
        path: PathBuf,
        source: io::Error,
    },
    /// Not JSON, or not a job: `at` names the file (and the protocol section).
    Parse {
        at: String,
        source: serde_json::Error,
    },
    UnknownProtocol {
        name: String,
        allowed: String,
    },
    /// The protocol's own section of the job (named after the protocol) is missing.
    MissingSection(&'static str),
    EmptyMix,
    MixWeights,
    NoObjects,
    ProcessIndex,
    NoEnd,
    Concurrency,
    OpenLoop,
    SizeRange,
    SizeChoice,
    /// Any other check of a protocol's section, e.g. "s3.bucket is empty".
    Invalid(&'static str),
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let problem = match self {
            JobError::Read { path, source } => return write!(f, "cannot read job {}: {source}", path.display()),
            JobError::Parse { at, source } => return write!(f, "{at}: {source}"),
            JobError::UnknownProtocol { name, allowed } => {
                return write!(f, "job: unknown protocol {name:?}; allowed: {allowed}")
            }
            JobError::MissingSection(name) => return write!(f, "job: protocol {name} needs a section \"{name}\""),
            JobError::Invalid(problem) => problem,
            JobError::EmptyMix => "mix is empty",
            JobError::MixWeights => "mix weights must be >= 0 with at least one > 0",
            JobError::NoObjects => "objects must be at least 1",
            JobError::ProcessIndex => "process_index must be below process_count",
            JobError::NoEnd => "set duration_s or ops",
            JobError::Concurrency => "concurrency must be >= 1",
            JobError::OpenLoop => "open loop needs rate > 0 and max_outstanding >= 1",
            JobError::SizeRange => "object_size min > max",
            JobError::SizeChoice => "object_size choice needs sizes (and as many weights)",
        };
        write!(f, "job: {problem}")
    }
}

impl std::error::Error for JobError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JobError::Read { source, .. } => Some(source),
            JobError::Parse { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Everything that can end `run` or `merge` without a result.
#[derive(Debug)]
pub enum Error {
    Job(JobError),
    /// A file other than the job could not be read or written: what was being done, and why.
    Io {
        what: String,
        source: io::Error,
    },
    /// A result file given to merge is not JSON.
    Json {
        what: String,
        source: serde_json::Error,
    },
    NoInputs,
    /// A result given to merge says the run failed.
    NotOk {
        path: PathBuf,
        fatal: String,
    },
    /// A result given to merge lacks a part.
    Malformed(String),
    HistogramBase64(base64::DecodeError),
    Histogram(hdrhistogram::serialization::DeserializeError),
    /// The protocol's own fatal error: the endpoint cannot be reached, credentials refused...
    Protocol(Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    pub fn protocol(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::Protocol(Box::new(error))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Job(e) => e.fmt(f),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Json { what, source } => write!(f, "{what}: {source}"),
            Error::NoInputs => f.write_str("merge: no result files given"),
            Error::NotOk { path, fatal } => write!(f, "{}: {fatal}", path.display()),
            Error::Malformed(what) => write!(f, "result: {what}"),
            Error::HistogramBase64(e) => write!(f, "histogram base64: {e}"),
            Error::Histogram(e) => write!(f, "histogram: {e}"),
            Error::Protocol(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Job(e) => Some(e),
            Error::Io { source, .. } => Some(source),
            Error::Json { source, .. } => Some(source),
            Error::HistogramBase64(e) => Some(e),
            Error::Histogram(e) => Some(e),
            Error::Protocol(e) => Some(e.as_ref()),
            Error::NoInputs | Error::NotOk { .. } | Error::Malformed(_) => None,
        }
    }
}

impl From<JobError> for Error {
    fn from(e: JobError) -> Self {
        Error::Job(e)
    }
}
