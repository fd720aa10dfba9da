//! MCP's stdio framing: one JSON-RPC message per line. Lines are read into a buffer of bounded
//! size; a longer line is skipped to its end without being kept, so no peer can make the gateway
//! hold more than the limit.

use std::io::{self, BufRead};

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A message (the buffer holds it, without the line end).
    Message,
    /// A line longer than the limit, skipped whole.
    TooLong,
    /// The end of the input.
    End,
}

/// Reads the next non-empty line into `buf` (cleared first), keeping at most `max` bytes.
/// A trailing `\r` is dropped.
pub fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    loop {
        buf.clear();
        let mut too_long = false;
        let mut ended = false;
        loop {
            let chunk = match reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                ended = true;
                break;
            }
            let (part, found) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], Some(i)),
                None => (chunk, None),
            };
            if !too_long {
                if buf.len() + part.len() > max {
                    too_long = true;
                    buf.clear();
                } else {
                    buf.extend_from_slice(part);
                }
            }
            match found {
                Some(i) => {
                    reader.consume(i + 1);
                    break;
                }
                None => {
                    let n = chunk.len();
                    reader.consume(n);
                }
            }
        }
        if too_long {
            return Ok(Line::TooLong);
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if !buf.iter().all(u8::is_ascii_whitespace) {
            return Ok(Line::Message);
        }
        if ended {
            return Ok(Line::End);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_long_ones_skipped_whole() {
        let input = b"{\"a\":1}\r\n\n\nxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n{\"b\":2}\n{\"c\":3}";
        let mut r = io::BufReader::with_capacity(4, &input[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Message);
        assert_eq!(buf, b"{\"a\":1}");
        assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::TooLong);
        assert!(buf.capacity() <= 16);
        assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Message);
        assert_eq!(buf, b"{\"b\":2}");
        assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Message);
        assert_eq!(buf, b"{\"c\":3}");
        assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::End);
    }
}
