//! The numbers of the CQL native protocol v4 the request path speaks, by name (the sections of Cassandra's
//! `doc/native_protocol_v4.spec`): the frame header's layout, opcodes, header and query flags, result kinds, the
//! rows metadata's flags and column types, consistency levels and error codes. `wire` reads and writes frames
//! with them; nothing else in the request path spells a protocol number.

use std::ops::Range;

/// The protocol version of a request (2.1); a response has `RESPONSE` set on it too.
pub const VERSION: u8 = 0x04;
/// The version byte's direction bit: set on every response.
pub const RESPONSE: u8 = 0x80;

/// A frame's header (2): version, flags, stream id, opcode, body length; then the body.
pub const HEADER: usize = 9;
pub const FLAGS_AT: usize = 1;
pub const STREAM_AT: Range<usize> = 2..4;
pub const OPCODE_AT: usize = 4;
pub const LENGTH_AT: Range<usize> = 5..9;

/// Stream ids of one connection (2.3: a signed short; a client uses the positive ones, 0 as well, and the server
/// its events' -1).
pub const STREAM_IDS: usize = 1 << 15;

/// What a frame is (2.4).
pub mod opcode {
    pub const ERROR: u8 = 0x00;
    pub const STARTUP: u8 = 0x01;
    pub const READY: u8 = 0x02;
    pub const AUTHENTICATE: u8 = 0x03;
    pub const RESULT: u8 = 0x08;
    pub const PREPARE: u8 = 0x09;
    pub const EXECUTE: u8 = 0x0A;
    pub const AUTH_RESPONSE: u8 = 0x0F;
    pub const AUTH_SUCCESS: u8 = 0x10;
}

/// A response header's flags (2.2): what comes in the body before its contents.
pub mod header_flag {
    /// A tracing id (a [uuid]: 16 bytes).
    pub const TRACING: u8 = 0x02;
    /// A custom payload (a [bytes map]).
    pub const CUSTOM_PAYLOAD: u8 = 0x04;
    /// The server's warnings (a [string list]).
    pub const WARNING: u8 = 0x08;
}

/// An EXECUTE's query flags (4.1.4).
pub mod query_flag {
    /// Bound values follow.
    pub const VALUES: u8 = 0x01;
    /// A RESULT of rows without their metadata (the request path knows the columns).
    pub const SKIP_METADATA: u8 = 0x02;
}

/// The kinds of a RESULT (4.2.5) the request path tells apart (any other, e.g. VOID for a write, has no rows).
pub mod result_kind {
    pub const ROWS: i32 = 0x0002;
}

/// The flags of a rows RESULT's metadata (4.2.5.2).
pub mod rows_flag {
    /// One keyspace and table for all columns, given once.
    pub const GLOBAL_TABLES_SPEC: i32 = 0x0001;
    /// A paging state follows.
    pub const HAS_MORE_PAGES: i32 = 0x0002;
    /// No column specs (asked for with `query_flag::SKIP_METADATA`).
    pub const NO_METADATA: i32 = 0x0004;
}

/// Column type options (4.2.5.2) that carry more than their id; every other id is the type alone.
pub mod option {
    /// A custom type's Java class name follows.
    pub const CUSTOM: u16 = 0x0000;
    /// The element's option follows.
    pub const LIST: u16 = 0x0020;
    /// The key's and the value's options follow.
    pub const MAP: u16 = 0x0021;
    /// The element's option follows.
    pub const SET: u16 = 0x0022;
    /// Keyspace, type name and each field's name and option follow.
    pub const UDT: u16 = 0x0030;
    /// Each element's option follows.
    pub const TUPLE: u16 = 0x0031;
}

/// The consistency levels (3) by their CQL names: the ones a request may ask for (not the SERIAL ones).
pub const CONSISTENCIES: [(&str, u16); 9] = [
    ("ANY", 0x0000),
    ("ONE", 0x0001),
    ("TWO", 0x0002),
    ("THREE", 0x0003),
    ("QUORUM", 0x0004),
    ("ALL", 0x0005),
    ("LOCAL_QUORUM", 0x0006),
    ("EACH_QUORUM", 0x0007),
    ("LOCAL_ONE", 0x000A),
];

/// An ERROR's codes (9) and the stable kind each is counted by (the driver's error names, snake case).
pub mod error_code {
    pub const SERVER_ERROR: i32 = 0x0000;
    pub const PROTOCOL_ERROR: i32 = 0x000A;
    pub const BAD_CREDENTIALS: i32 = 0x0100;
    pub const UNAVAILABLE: i32 = 0x1000;
    pub const OVERLOADED: i32 = 0x1001;
    pub const IS_BOOTSTRAPPING: i32 = 0x1002;
    pub const TRUNCATE_ERROR: i32 = 0x1003;
    pub const WRITE_TIMEOUT: i32 = 0x1100;
    pub const READ_TIMEOUT: i32 = 0x1200;
    pub const READ_FAILURE: i32 = 0x1300;
    pub const FUNCTION_FAILURE: i32 = 0x1400;
    pub const WRITE_FAILURE: i32 = 0x1500;
    pub const SYNTAX_ERROR: i32 = 0x2000;
    pub const UNAUTHORIZED: i32 = 0x2100;
    pub const INVALID: i32 = 0x2200;
    pub const CONFIG_ERROR: i32 = 0x2300;
    pub const ALREADY_EXISTS: i32 = 0x2400;
    /// "This statement is not prepared here" (the node restarted): the request path prepares it again and retries.
    pub const UNPREPARED: i32 = 0x2500;
}
