//! The streamable-HTTP server the gateway stands in front of: each request forwarded with the
//! client's MCP headers, and its answer read back as a status, the headers the client needs, and
//! a body — one JSON message, an event stream read event by event, or nothing. Redirects are
//! passed back, not followed; statuses are answers, not errors.

use std::io::{BufReader, Read};

use pcp_mcp::framing::{Line, read_line};

/// Request headers passed on to the server (any case).
const FORWARDED: &[&str] = &[
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "authorization",
    "last-event-id",
];

/// Answer headers passed back to the client.
const RETURNED: &[&str] = &[
    "mcp-session-id",
    "www-authenticate",
    "retry-after",
    "location",
];

/// The server.
pub struct Upstream {
    agent: ureq::Agent,
    url: String,
    max: usize,
}

/// What the server answered.
pub struct Answer {
    pub status: u16,
    /// The headers of [`RETURNED`] it sent.
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

/// An answer's body.
pub enum Body {
    Empty,
    /// One message (or any other body, passed back as it is).
    Whole {
        content_type: String,
        bytes: Vec<u8>,
    },
    /// An event stream, to read with [`Events::next`].
    Events(Events),
}

/// One event of a stream.
#[derive(Debug, Default)]
pub struct Event {
    pub id: Option<String>,
    pub retry: Option<String>,
    /// The data lines joined with newlines (a JSON-RPC message, or empty).
    pub data: Vec<u8>,
}

/// A server's event stream, read within the message limit.
pub struct Events {
    reader: BufReader<Box<dyn Read + Send>>,
    line: Vec<u8>,
    max: usize,
}

impl Events {
    /// The next event; `None` at the stream's end; an error for an event over the limit.
    pub fn next(&mut self) -> Result<Option<Event>, String> {
        let mut event = Event::default();
        let mut any = false;
        loop {
            match read_line(&mut self.reader, &mut self.line, self.max) {
                Ok(Line::Message) => {}
                Ok(Line::TooLong) => {
                    return Err(format!(
                        "the server sent an event over the gateway's limit of {} bytes",
                        self.max
                    ));
                }
                Ok(Line::End) => return Ok(any.then_some(event)),
                Err(e) => return Err(format!("cannot read the server's stream: {e}")),
            }
            // read_line skips blank lines, so an event ends where the next field repeats or at
            // a `data` line after which the stream pauses: events here are one data line each,
            // as MCP servers send them.
            let line = std::mem::take(&mut self.line);
            let (field, value) = match line.iter().position(|&b| b == b':') {
                Some(0) => continue, // a comment (keep-alive)
                Some(i) => (&line[..i], trim_space(&line[i + 1..])),
                None => (&line[..], &b""[..]),
            };
            any = true;
            match field {
                b"id" => event.id = Some(String::from_utf8_lossy(value).into_owned()),
                b"retry" => event.retry = Some(String::from_utf8_lossy(value).into_owned()),
                b"data" => {
                    if !event.data.is_empty() {
                        event.data.push(b'\n');
                    }
                    event.data.extend_from_slice(value);
                    if event.data.len() > self.max {
                        return Err("an event over the gateway's limit".into());
                    }
                    return Ok(Some(event));
                }
                _ => {}
            }
        }
    }
}

fn trim_space(v: &[u8]) -> &[u8] {
    v.strip_prefix(b" ").unwrap_or(v)
}

impl Upstream {
    pub fn new(url: &str, max: usize) -> Upstream {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(None)
            .build();
        Upstream {
            agent: config.into(),
            url: url.to_string(),
            max,
        }
    }

    /// POSTs `body` with the client's `headers`.
    pub fn post(&self, body: &[u8], headers: &[(String, String)]) -> Result<Answer, String> {
        let mut req = self.agent.post(&self.url);
        for (k, v) in forwarded(headers) {
            req = req.header(k, v);
        }
        let has_type = headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
        if !has_type {
            req = req.header("Content-Type", "application/json");
        }
        let resp = req
            .send(body)
            .map_err(|e| format!("cannot reach {}: {e}", self.url))?;
        self.answer(resp)
    }

    /// GETs the server's own stream, or DELETEs the session.
    pub fn call(&self, method: &str, headers: &[(String, String)]) -> Result<Answer, String> {
        let mut req = match method {
            "DELETE" => self.agent.delete(&self.url),
            _ => self.agent.get(&self.url),
        };
        for (k, v) in forwarded(headers) {
            req = req.header(k, v);
        }
        let resp = req
            .call()
            .map_err(|e| format!("cannot reach {}: {e}", self.url))?;
        self.answer(resp)
    }

    fn answer(&self, resp: ureq::http::Response<ureq::Body>) -> Result<Answer, String> {
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .filter(|(k, _)| RETURNED.contains(&k.as_str()))
            .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
            .collect();
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let reader: Box<dyn Read + Send> = Box::new(resp.into_body().into_reader());
        let body = if content_type.starts_with("text/event-stream") {
            Body::Events(Events {
                reader: BufReader::with_capacity(64 * 1024, reader),
                line: Vec::new(),
                max: self.max,
            })
        } else {
            let mut bytes = Vec::new();
            reader
                .take(self.max as u64 + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read the server's answer: {e}"))?;
            if bytes.len() > self.max {
                return Err(format!(
                    "the server's answer is over the gateway's limit of {} bytes",
                    self.max
                ));
            }
            if bytes.is_empty() {
                Body::Empty
            } else {
                Body::Whole {
                    content_type,
                    bytes,
                }
            }
        };
        Ok(Answer {
            status,
            headers,
            body,
        })
    }
}

fn forwarded(headers: &[(String, String)]) -> impl Iterator<Item = (&str, &str)> {
    headers
        .iter()
        .filter(|(k, _)| FORWARDED.iter().any(|f| k.eq_ignore_ascii_case(f)))
        .map(|(k, v)| (k.as_str(), v.as_str()))
}
