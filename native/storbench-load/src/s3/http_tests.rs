//! The response parser on scripted byte streams: chunked bodies, CRLF split across reads, 100 Continue,
//! HEAD, error documents, and connections that close early.

use super::{Conn, RequestError, Sink};
use std::collections::VecDeque;
use std::io::{self, Read, Write};

/// A server that answers with these pieces, one per read (so every boundary is exercised).
struct Scripted(VecDeque<Vec<u8>>);

impl Read for Scripted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(mut piece) = self.0.pop_front() else { return Ok(0) };
        let n = piece.len().min(buf.len());
        buf[..n].copy_from_slice(&piece[..n]);
        if n < piece.len() {
            self.0.push_front(piece.split_off(n));
        }
        Ok(n)
    }
}

impl Write for Scripted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn conn(pieces: &[&[u8]]) -> Conn {
    let mut conn = Conn::new();
    conn.stream = Some(Box::new(Scripted(pieces.iter().map(|p| p.to_vec()).collect())));
    conn
}

/// Every byte of `text` its own read: the worst split a network can make.
fn bytewise(text: &[u8]) -> Conn {
    let pieces: Vec<&[u8]> = text.chunks(1).collect();
    conn(&pieces)
}

fn collect(conn: &mut Conn, head: bool) -> (Result<super::Response, RequestError>, Vec<u8>) {
    let mut body = Vec::new();
    let resp = conn.receive(head, &mut Sink::Collect(&mut body));
    (resp, body)
}

const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
    5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n";

#[test]
fn a_chunked_body_split_at_every_byte_is_whole_with_its_extensions_and_trailers() {
    let mut c = bytewise(CHUNKED);
    let (resp, body) = collect(&mut c, false);
    let resp = resp.expect("parsed");
    assert_eq!(resp.status, 200);
    assert_eq!(body, b"hello, world");
    assert_eq!(resp.body_bytes, 12);
    assert!(!resp.close);
}

#[test]
fn a_keep_alive_connection_reads_the_next_response_after_a_chunked_one() {
    let mut both = CHUNKED.to_vec();
    both.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nETag: \"e\"\r\n\r\nabc");
    let mut c = conn(&[&both]);
    assert_eq!(collect(&mut c, false).1, b"hello, world");
    let (resp, body) = collect(&mut c, false);
    assert_eq!(body, b"abc");
    assert_eq!(resp.unwrap().etag.as_deref(), Some("\"e\""));
}

#[test]
fn continue_is_skipped_and_head_answers_have_no_body() {
    let mut c = conn(&[
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
    ]);
    let (resp, body) = collect(&mut c, true);
    let resp = resp.unwrap();
    assert_eq!((resp.status, resp.content_length, body.len()), (200, Some(10), 0));
    assert_eq!(collect(&mut c, false).0.unwrap().status, 204);
}

#[test]
fn an_error_document_is_kept_apart_from_the_sink() {
    let doc = b"<Error><Code>NoSuchKey</Code></Error>";
    let text = [format!("HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\n\r\n", doc.len()).as_bytes(), doc].concat();
    let mut c = conn(&[&text]);
    let (resp, body) = collect(&mut c, false);
    let resp = resp.unwrap();
    assert_eq!(resp.status, 404);
    assert!(body.is_empty());
    assert_eq!(resp.error_body, doc);
}

#[test]
fn without_a_length_the_body_runs_until_the_server_closes() {
    let mut c = conn(&[b"HTTP/1.1 200 OK\r\n\r\nall ", b"of it"]);
    let (resp, body) = collect(&mut c, false);
    assert_eq!(body, b"all of it");
    assert!(resp.unwrap().close);
}

#[test]
fn connections_closed_early_and_bad_chunk_sizes_say_what_went_wrong() {
    let cases: [(&[u8], &str); 4] = [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "7 body bytes missing"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", "2 chunk bytes missing"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello", "after a chunk"),
        (b"HTTP/1.1 200 OK\r\nContent", "before a response"),
    ];
    for (text, says) in cases {
        match collect(&mut bytewise(text), false).0 {
            Err(RequestError::Eof(message)) => assert!(message.contains(says), "{message:?} lacks {says:?}"),
            Err(other) => panic!("{says}: {other:?}"),
            Ok(_) => panic!("{says}: parsed"),
        }
    }
    let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
    match collect(&mut conn(&[bad]), false).0 {
        Err(RequestError::Protocol(message)) => assert!(message.contains("bad chunk size \"zz\"")),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("parsed"),
    }
}
