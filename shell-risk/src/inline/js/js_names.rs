//! What JavaScript names do when called: Node's `fs`, `child_process`, network modules and
//! globals, `process`, `os`, Deno's and Bun's namespaces. A name in a module the gate reads that
//! no table lists is not known to be harmless.

/// What calling a dotted name does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Meaning {
    Delete,
    /// Deletes what is inside its first argument (`fs-extra`'s `emptyDir`).
    Empty,
    Move,
    WriteFirst,
    /// Reads its first argument and writes its second (`copyFile`).
    WriteSecond,
    /// Writes its second argument (`symlink(target, path)`).
    WritesSecondOnly,
    Read,
    /// `fs.open(path, flags)`.
    Open,
    Shell,
    Exec,
    /// `child_process.fork(module)`: runs a script with node.
    Fork,
    Run,
    Eval,
    Network,
    Native,
    Reflection,
    Environment,
    ChangesFolder,
    Unknown,
    Harmless,
}

/// `node:fs` → `fs`, `fs/promises` and `fs-extra` → `fs`, `child_process` as it is.
pub(super) fn canonical_module(source: &str) -> String {
    let s = source.strip_prefix("node:").unwrap_or(source);
    match s {
        "fs/promises" | "fs-extra" | "graceful-fs" => "fs".into(),
        "child_process" | "node:child_process" => "child_process".into(),
        "path/posix" => "path".into(),
        other => other.into(),
    }
}

const FS_DELETES: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "remove",
    "rmSync",
    "rmdirSync",
    "unlinkSync",
    "removeSync",
];
const FS_EMPTIES: &[&str] = &["emptyDir", "emptyDirSync", "emptydir", "emptydirSync"];
const FS_MOVES: &[&str] = &["rename", "renameSync", "move", "moveSync"];
const FS_WRITES_FIRST: &[&str] = &[
    "writeFile",
    "writeFileSync",
    "appendFile",
    "appendFileSync",
    "mkdir",
    "mkdirSync",
    "chmod",
    "chmodSync",
    "lchmod",
    "lchmodSync",
    "chown",
    "chownSync",
    "lchown",
    "lchownSync",
    "truncate",
    "truncateSync",
    "utimes",
    "utimesSync",
    "lutimes",
    "lutimesSync",
    "createWriteStream",
    "outputFile",
    "outputFileSync",
    "writeJson",
    "writeJsonSync",
    "outputJson",
    "outputJsonSync",
    "ensureFile",
    "ensureFileSync",
    "ensureDir",
    "ensureDirSync",
    "mkdirp",
    "mkdirpSync",
    "mkdirs",
    "mkdirsSync",
];
const FS_WRITES_SECOND: &[&str] = &[
    "copyFile",
    "copyFileSync",
    "cp",
    "cpSync",
    "copy",
    "copySync",
];
const FS_LINKS: &[&str] = &[
    "symlink",
    "symlinkSync",
    "link",
    "linkSync",
    "ensureSymlink",
    "ensureLink",
];
const FS_READS: &[&str] = &[
    "readFile",
    "readFileSync",
    "createReadStream",
    "readJson",
    "readJsonSync",
];
const FS_HARMLESS: &[&str] = &[
    "existsSync",
    "exists",
    "stat",
    "statSync",
    "lstat",
    "lstatSync",
    "readdir",
    "readdirSync",
    "access",
    "accessSync",
    "realpath",
    "realpathSync",
    "readlink",
    "readlinkSync",
    "opendir",
    "opendirSync",
    "constants",
    "Stats",
    "Dirent",
    "watch",
    "watchFile",
    "unwatchFile",
    "pathExists",
    "pathExistsSync",
    "mkdtemp",
    "mkdtempSync",
    "close",
    "closeSync",
    "read",
    "readSync",
    "fstat",
    "fstatSync",
    "write",
    "writeSync",
    "promises",
];
const CHILD_SHELL: &[&str] = &["exec", "execSync"];
const CHILD_EXEC: &[&str] = &["spawn", "spawnSync", "execFile", "execFileSync"];
/// Modules and globals that reach the network.
const NETWORK: &[&str] = &[
    "net",
    "http",
    "https",
    "http2",
    "dgram",
    "tls",
    "dns",
    "undici",
    "axios",
    "node-fetch",
    "got",
    "request",
    "superagent",
    "ws",
    "socket.io-client",
    "ftp",
    "basic-ftp",
    "ssh2",
    "nodemailer",
    "fetch",
    "XMLHttpRequest",
    "WebSocket",
    "EventSource",
    "navigator.sendBeacon",
    "Deno.connect",
    "Deno.connectTls",
    "Deno.listen",
    "Deno.listenTls",
    "Deno.serve",
    "Deno.resolveDns",
    "Deno.startTls",
    "Bun.serve",
    "Bun.listen",
    "Bun.connect",
    "Bun.udpSocket",
];
const EVALS: &[&str] = &[
    "eval",
    "Function",
    "setTimeout",
    "setInterval",
    "vm",
    "Worker",
    "importScripts",
    "worker_threads.Worker",
];
const NATIVE: &[&str] = &[
    "process.binding",
    "process._linkedBinding",
    "process.dlopen",
    "ffi-napi",
    "ffi",
    "Deno.dlopen",
    "bun:ffi",
    "module",
];
const REFLECTION: &[&str] = &[
    "Reflect",
    "globalThis",
    "global",
    "require.cache",
    "module.constructor",
    "process.mainModule",
    "require.main",
    "Object.getOwnPropertyDescriptor",
];
const PROCESS_HARMLESS: &[&str] = &[
    "exit",
    "cwd",
    "argv",
    "argv0",
    "stdout",
    "stderr",
    "stdin",
    "version",
    "versions",
    "platform",
    "arch",
    "pid",
    "ppid",
    "uptime",
    "hrtime",
    "memoryUsage",
    "nextTick",
    "on",
    "once",
    "exitCode",
    "title",
    "execPath",
    "release",
    "config",
    "emitWarning",
    "cpuUsage",
    "execArgv",
    "features",
    "resourceUsage",
];
const OS_HARMLESS: &[&str] = &[
    "homedir",
    "tmpdir",
    "platform",
    "arch",
    "cpus",
    "totalmem",
    "freemem",
    "hostname",
    "type",
    "release",
    "EOL",
    "userInfo",
    "uptime",
    "networkInterfaces",
    "loadavg",
    "endianness",
    "constants",
    "version",
    "machine",
    "availableParallelism",
    "devNull",
];
const DENO_WRITES_FIRST: &[&str] = &[
    "writeTextFile",
    "writeTextFileSync",
    "writeFile",
    "writeFileSync",
    "mkdir",
    "mkdirSync",
    "chmod",
    "chmodSync",
    "chown",
    "chownSync",
    "create",
    "createSync",
    "truncate",
    "truncateSync",
    "utime",
    "utimeSync",
    "makeTempDir",
    "makeTempFile",
];
const DENO_HARMLESS: &[&str] = &[
    "cwd",
    "args",
    "version",
    "build",
    "pid",
    "ppid",
    "execPath",
    "readDir",
    "readDirSync",
    "stat",
    "statSync",
    "lstat",
    "lstatSync",
    "realPath",
    "realPathSync",
    "exit",
    "inspect",
    "noColor",
    "stdout",
    "stderr",
    "stdin",
    "mainModule",
    "osRelease",
    "hostname",
    "memoryUsage",
    "env.get",
    "env.has",
    "errors",
];
const BUN_HARMLESS: &[&str] = &[
    "version",
    "revision",
    "argv",
    "main",
    "sleep",
    "sleepSync",
    "which",
    "hash",
    "inspect",
    "nanoseconds",
    "deepEquals",
    "escapeHTML",
    "stringWidth",
    "env",
    "password",
];
/// Modules whose every name is harmless.
const HARMLESS_MODULES: &[&str] = &[
    "path",
    "util",
    "crypto",
    "url",
    "querystring",
    "assert",
    "events",
    "buffer",
    "string_decoder",
    "readline",
    "zlib",
    "perf_hooks",
    "timers",
    "stream",
    "console",
    "punycode",
    "Math",
    "JSON",
    "Date",
    "Object",
    "Array",
    "String",
    "Number",
    "Buffer",
    "Promise",
    "Map",
    "Set",
    "RegExp",
    "console",
];

/// What calling (or loading) `full` does.
pub(super) fn meaning(full: &str) -> Meaning {
    let full = full.replace(".promises.", ".");
    let (module, rest) = full.split_once('.').unwrap_or((full.as_str(), ""));
    let in_list = |list: &[&str], name: &str| list.contains(&name);
    let prefixed = |list: &[&str]| {
        list.iter()
            .any(|m| full == *m || full.starts_with(&format!("{m}.")))
    };
    if prefixed(NETWORK) {
        return Meaning::Network;
    }
    if prefixed(NATIVE) {
        return Meaning::Native;
    }
    if prefixed(REFLECTION) {
        return Meaning::Reflection;
    }
    if prefixed(EVALS) {
        return Meaning::Eval;
    }
    match module {
        "fs" => fs(rest),
        "child_process" => match rest {
            "" => Meaning::Harmless,
            r if in_list(CHILD_SHELL, r) => Meaning::Shell,
            r if in_list(CHILD_EXEC, r) => Meaning::Exec,
            "fork" => Meaning::Fork,
            _ => Meaning::Unknown,
        },
        "rimraf" | "del" | "trash" => match rest {
            "" | "sync" | "rimraf" | "rimrafSync" | "deleteSync" | "default" => Meaning::Delete,
            _ => Meaning::Unknown,
        },
        "process" => match rest {
            "" => Meaning::Harmless,
            "env" => Meaning::Environment,
            "chdir" => Meaning::ChangesFolder,
            r if r.starts_with("env.") => Meaning::Harmless,
            r if in_list(PROCESS_HARMLESS, r.split('.').next().unwrap_or(r)) => Meaning::Harmless,
            _ => Meaning::Unknown,
        },
        "os" => match rest {
            "" => Meaning::Harmless,
            r if in_list(OS_HARMLESS, r) => Meaning::Harmless,
            _ => Meaning::Unknown,
        },
        "Deno" => deno(rest),
        "Bun" => match rest {
            "" => Meaning::Harmless,
            "write" => Meaning::WriteFirst,
            "file" => Meaning::Read,
            "spawn" | "spawnSync" | "$" => Meaning::Run,
            "env" => Meaning::Environment,
            r if in_list(BUN_HARMLESS, r.split('.').next().unwrap_or(r)) => Meaning::Harmless,
            _ => Meaning::Unknown,
        },
        "require" => Meaning::Harmless,
        m if in_list(HARMLESS_MODULES, m) => Meaning::Harmless,
        _ => Meaning::Harmless,
    }
}

fn fs(rest: &str) -> Meaning {
    let l = |list: &[&str]| list.contains(&rest);
    if rest.is_empty() || l(FS_HARMLESS) {
        Meaning::Harmless
    } else if l(FS_DELETES) {
        Meaning::Delete
    } else if l(FS_EMPTIES) {
        Meaning::Empty
    } else if l(FS_MOVES) {
        Meaning::Move
    } else if l(FS_WRITES_FIRST) {
        Meaning::WriteFirst
    } else if l(FS_WRITES_SECOND) {
        Meaning::WriteSecond
    } else if l(FS_LINKS) {
        Meaning::WritesSecondOnly
    } else if l(FS_READS) {
        Meaning::Read
    } else if matches!(rest, "open" | "openSync") {
        Meaning::Open
    } else {
        Meaning::Unknown
    }
}

fn deno(rest: &str) -> Meaning {
    match rest {
        "" => Meaning::Harmless,
        "remove" | "removeSync" => Meaning::Delete,
        "rename" | "renameSync" => Meaning::Move,
        "copyFile" | "copyFileSync" => Meaning::WriteSecond,
        "symlink" | "symlinkSync" | "link" | "linkSync" => Meaning::WritesSecondOnly,
        "readTextFile" | "readTextFileSync" | "readFile" | "readFileSync" | "open" | "openSync" => {
            Meaning::Read
        }
        "Command" | "run" => Meaning::Run,
        "chdir" => Meaning::ChangesFolder,
        "env" | "env.toObject" => Meaning::Environment,
        r if DENO_WRITES_FIRST.contains(&r) => Meaning::WriteFirst,
        r if DENO_HARMLESS.contains(&r) => Meaning::Harmless,
        r if r
            .split_once('.')
            .is_some_and(|(head, _)| head != "env" && DENO_HARMLESS.contains(&head)) =>
        {
            Meaning::Harmless
        }
        _ => Meaning::Unknown,
    }
}
