//! The gateway's own work for one routine tool call, without I/O: the client's `tools/call`
//! held and made into an intent, the desktop's approval forwarding it, the server's answer
//! passed back (what `pcpctl mcp` adds to a call besides the desktop's round trip and the
//! pipes).

use criterion::{Criterion, criterion_group, criterion_main};
use pcp_mcp::{Action, Limits, Proxy, Server, Verdict};

fn bench(c: &mut Criterion) {
    let server = Server {
        name: "fs".into(),
        command: "mcp-server-filesystem /p".into(),
        cwd: Some("/p".into()),
    };
    let mut proxy = Proxy::new(server, Limits::default(), "denied: {reason}", 1);
    proxy.from_client(br#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
    proxy.from_server(
        br#"{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"read_text_file","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]}}"#,
    );
    let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/p/notes.txt"}}}"#;
    let answer =
        br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}"#;
    c.bench_function("mcp_proxy_routine_call", |b| {
        b.iter(|| {
            let asked = proxy.from_client(call);
            let Some(Action::Ask(ask)) = asked.into_iter().next() else {
                panic!("not asked");
            };
            let forwarded = proxy.decided(&ask.call, Verdict::Allow);
            assert_eq!(forwarded.len(), 1);
            let back = proxy.from_server(answer);
            assert_eq!(back.len(), 1);
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
