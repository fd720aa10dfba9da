//! The loopback side's HTTP/1.1, as much as MCP clients use: a request head read within bounds,
//! a body by `Content-Length` or chunked (at most the message limit), and the answers — a JSON
//! body, `202 Accepted`, an error, or an event stream written event by event (its end is the
//! connection's end).

use std::io::{self, BufRead, Read, Write};

/// Largest request head.
const MAX_HEAD_BYTES: usize = 32 * 1024;
/// Most header lines in a head.
const MAX_HEADERS: usize = 64;

/// A request from the client.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads the next request; `Ok(None)` when the client closed the connection between requests.
/// The error says what was wrong (answered with 400 by the caller).
pub fn read_request(reader: &mut impl BufRead, max_body: usize) -> io::Result<Option<Request>> {
    let mut head = Vec::new();
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            if head.is_empty() {
                return Ok(None);
            }
            return Err(bad("the connection closed inside a request head"));
        }
        let before = head.len();
        head.extend_from_slice(chunk);
        if let Some(end) = find(&head, b"\r\n\r\n") {
            reader.consume(end + 4 - before);
            head.truncate(end + 4);
            break;
        }
        let n = chunk.len();
        reader.consume(n);
        if head.len() > MAX_HEAD_BYTES {
            return Err(bad("the request head is too large"));
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(bad("the request head is incomplete")),
        Err(e) => return Err(bad(&format!("the request head is malformed: {e}"))),
    }
    let method = parsed.method.unwrap_or("").to_string();
    let path = parsed.path.unwrap_or("").to_string();
    let headers: Vec<(String, String)> = parsed
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_string(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect();
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        request.body = read_chunked(reader, max_body)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length
            .trim()
            .parse()
            .map_err(|_| bad("Content-Length is not a number"))?;
        if length > max_body {
            return Err(bad(&format!(
                "the body is over the gateway's limit of {max_body} bytes"
            )));
        }
        request.body = vec![0; length];
        reader.read_exact(&mut request.body)?;
    }
    Ok(Some(request))
}

fn read_chunked(reader: &mut impl BufRead, max_body: usize) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        reader.take(1024).read_line(&mut line)?;
        let size = line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size, 16).map_err(|_| bad("a chunk size is malformed"))?;
        if body.len() + size > max_body {
            return Err(bad(&format!(
                "the body is over the gateway's limit of {max_body} bytes"
            )));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf)?;
        if size == 0 {
            return Ok(body);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn bad(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

/// Writes a whole answer with a body.
pub fn respond(
    out: &mut impl Write,
    status: u16,
    headers: &[(String, String)],
    content_type: Option<&str>,
    body: &[u8],
) -> io::Result<()> {
    write!(out, "HTTP/1.1 {status} {}\r\n", reason(status))?;
    for (k, v) in headers {
        write!(out, "{k}: {v}\r\n")?;
    }
    if let Some(ct) = content_type {
        write!(out, "Content-Type: {ct}\r\n")?;
    }
    write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
    out.write_all(body)?;
    out.flush()
}

/// Starts an event stream (ended by closing the connection).
pub fn start_stream(out: &mut impl Write, headers: &[(String, String)]) -> io::Result<()> {
    write!(out, "HTTP/1.1 200 OK\r\n")?;
    for (k, v) in headers {
        write!(out, "{k}: {v}\r\n")?;
    }
    write!(
        out,
        "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\n\
         Connection: close\r\n\r\n"
    )?;
    out.flush()
}

/// One event of a stream: its id and retry when it had them, and `data` (one line of JSON, or
/// empty for an event that only primes a reconnection).
pub fn write_event(
    out: &mut impl Write,
    id: Option<&str>,
    retry: Option<&str>,
    data: &[u8],
) -> io::Result<()> {
    if let Some(id) = id {
        writeln!(out, "id: {id}")?;
    }
    if let Some(retry) = retry {
        writeln!(out, "retry: {retry}")?;
    }
    out.write_all(b"data: ")?;
    out.write_all(data)?;
    out.write_all(b"\n\n")?;
    out.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_by_length_or_chunks_and_bounded() {
        let raw = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}\
                    POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
        let mut r = io::BufReader::new(&raw[..]);
        let a = read_request(&mut r, 100).unwrap().unwrap();
        assert_eq!(
            (a.method.as_str(), a.path.as_str(), &a.body[..]),
            ("POST", "/mcp", &b"{}"[..])
        );
        assert_eq!(a.header("HOST"), Some("x"));
        let b = read_request(&mut r, 100).unwrap().unwrap();
        assert_eq!(b.body, b"{}");
        assert!(read_request(&mut r, 100).unwrap().is_none());
        let big = b"POST / HTTP/1.1\r\nContent-Length: 999\r\n\r\n";
        assert!(read_request(&mut io::BufReader::new(&big[..]), 100).is_err());
    }
}
