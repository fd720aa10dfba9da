//! What Python names do when called: the standard library's file, process, network,
//! evaluation and reflection functions, and the `os` and `shutil` names known to be harmless.
//! A name of `os`, `shutil`, `subprocess`, `importlib` and a few more that no table lists is not
//! known to be harmless; other modules only compute.

/// Modules whose use is network access (the name or a dotted prefix of it).
pub(super) const NETWORK: &[&str] = &[
    "socket",
    "ssl",
    "socketserver",
    "http.client",
    "http.server",
    "httplib",
    "urllib.request",
    "urllib2",
    "urllib3",
    "requests",
    "httpx",
    "aiohttp",
    "ftplib",
    "smtplib",
    "poplib",
    "imaplib",
    "telnetlib",
    "nntplib",
    "xmlrpc",
    "paramiko",
    "fabric",
    "websocket",
    "websockets",
    "pycurl",
    "grpc",
    "webbrowser",
    "asyncio.open_connection",
    "asyncio.start_server",
    "asyncio.open_unix_connection",
    "urllib.urlopen",
    "urllib.urlretrieve",
];

/// Modules that reach native code.
pub(super) const NATIVE: &[&str] = &["ctypes", "cffi", "_ctypes"];

/// Calls that delete their first argument.
pub(super) const DELETES: &[&str] = &[
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "shutil.rmtree",
];
/// Calls that move their first argument to their second.
pub(super) const MOVES: &[&str] = &["os.rename", "os.replace", "os.renames", "shutil.move"];
/// Calls that write (create, change) their first argument.
pub(super) const WRITES_FIRST: &[&str] = &[
    "os.mkdir",
    "os.makedirs",
    "os.chmod",
    "os.lchmod",
    "os.chown",
    "os.lchown",
    "os.utime",
    "os.truncate",
    "os.mkfifo",
    "os.mknod",
    "os.chflags",
    "os.setxattr",
    "os.removexattr",
    "shutil.chown",
    "shutil.make_archive",
    "sqlite3.connect",
    "shelve.open",
    "dbm.open",
];
/// Calls that read their first argument and write their second.
pub(super) const WRITES_SECOND: &[&str] = &[
    "shutil.copy",
    "shutil.copy2",
    "shutil.copyfile",
    "shutil.copytree",
    "shutil.copymode",
    "shutil.copystat",
    "os.symlink",
    "os.link",
    "shutil.unpack_archive",
];
/// Calls whose mode says whether they read or write their first argument.
pub(super) const OPENS: &[&str] = &[
    "open",
    "io.open",
    "codecs.open",
    "builtins.open",
    "gzip.open",
    "bz2.open",
    "lzma.open",
    "tarfile.open",
    "zipfile.ZipFile",
    "os.open",
];
/// Calls that run a shell command line.
pub(super) const SHELLS: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "commands.getoutput",
    "commands.getstatusoutput",
    "asyncio.create_subprocess_shell",
    "platform.popen",
];
/// Calls that run a program with an argument list (or, with `shell=True`, a command line).
pub(super) const EXECS: &[&str] = &[
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "pty.spawn",
];
/// Calls that run a program in ways not followed here.
pub(super) const RUNS: &[&str] = &[
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.execvpe",
    "os.execl",
    "os.execle",
    "os.execlp",
    "os.execlpe",
    "os.spawnv",
    "os.spawnve",
    "os.spawnvp",
    "os.spawnvpe",
    "os.spawnl",
    "os.spawnle",
    "os.spawnlp",
    "os.spawnlpe",
    "os.posix_spawn",
    "os.posix_spawnp",
    "asyncio.create_subprocess_exec",
    "os.startfile",
];
/// Calls that evaluate code.
pub(super) const EVALS: &[&str] = &[
    "eval",
    "exec",
    "compile",
    "execfile",
    "builtins.eval",
    "builtins.exec",
];
/// Calls that import a module named by their argument.
pub(super) const IMPORTS: &[&str] = &[
    "__import__",
    "importlib.import_module",
    "builtins.__import__",
];
/// Calls that load objects which may run code.
pub(super) const LOADS: &[&str] = &[
    "pickle.loads",
    "pickle.load",
    "marshal.loads",
    "marshal.load",
    "dill.loads",
    "dill.load",
    "cloudpickle.loads",
    "shelve.open_dynamic",
    "runpy.run_path",
    "runpy.run_module",
    "code.interact",
    "importlib.reload",
];
/// Builtins that reach everything by name.
pub(super) const REFLECTION: &[&str] = &[
    "globals",
    "locals",
    "vars",
    "breakpoint",
    "builtins.globals",
];
/// `os` names known to be harmless (reading the system, paths, the process's own identity).
pub(super) const OS_HARMLESS: &[&str] = &[
    "getcwd",
    "getcwdb",
    "listdir",
    "scandir",
    "walk",
    "fwalk",
    "stat",
    "lstat",
    "getpid",
    "getppid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getgroups",
    "getlogin",
    "cpu_count",
    "sep",
    "linesep",
    "name",
    "getenv",
    "getenvb",
    "urandom",
    "get_terminal_size",
    "uname",
    "access",
    "fspath",
    "fsencode",
    "fsdecode",
    "devnull",
    "curdir",
    "pardir",
    "extsep",
    "pathsep",
    "altsep",
    "times",
    "getloadavg",
    "isatty",
    "strerror",
    "umask",
    "get_exec_path",
    "environ",
    "environb",
    "readlink",
    "chdir",
    "terminal_size",
    "stat_result",
    "PathLike",
    "DirEntry",
    "SEEK_SET",
    "SEEK_CUR",
    "SEEK_END",
    "O_RDONLY",
    "R_OK",
    "W_OK",
    "X_OK",
    "F_OK",
    "sched_getaffinity",
];
/// `shutil` names known to be harmless.
pub(super) const SHUTIL_HARMLESS: &[&str] = &[
    "which",
    "disk_usage",
    "get_terminal_size",
    "get_archive_formats",
    "get_unpack_formats",
    "copyfileobj",
    "Error",
    "SameFileError",
];
/// Path methods by what they do to the path they are called on.
pub(super) const PATH_READS: &[&str] = &["read_text", "read_bytes"];
pub(super) const PATH_WRITES: &[&str] = &[
    "write_text",
    "write_bytes",
    "touch",
    "mkdir",
    "chmod",
    "lchmod",
    "symlink_to",
    "hardlink_to",
];
pub(super) const PATH_DELETES: &[&str] = &["unlink", "rmdir"];
pub(super) const PATH_MOVES: &[&str] = &["rename", "replace"];
/// Calls on any object whose name says they save to a file (pandas, numpy, matplotlib, PIL).
pub(super) const SAVES: &[&str] = &[
    "to_csv",
    "to_json",
    "to_excel",
    "to_parquet",
    "to_pickle",
    "to_html",
    "to_latex",
    "to_feather",
    "to_hdf",
    "to_markdown",
    "to_xml",
    "save",
    "savefig",
    "savetxt",
    "savez",
    "savez_compressed",
    "imwrite",
    "write_file",
    "export",
];

/// What a dotted name does when called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Meaning {
    Delete,
    Move,
    WriteFirst,
    WriteSecond,
    Open,
    Shell,
    Exec,
    Run,
    Eval,
    Import,
    Load,
    Reflection,
    GetAttr,
    Network,
    Native,
    Unknown,
    Harmless,
}

pub(super) fn meaning(full: &str) -> Meaning {
    let tables: [(&[&str], Meaning); 13] = [
        (DELETES, Meaning::Delete),
        (MOVES, Meaning::Move),
        (WRITES_FIRST, Meaning::WriteFirst),
        (WRITES_SECOND, Meaning::WriteSecond),
        (OPENS, Meaning::Open),
        (SHELLS, Meaning::Shell),
        (EXECS, Meaning::Exec),
        (RUNS, Meaning::Run),
        (EVALS, Meaning::Eval),
        (IMPORTS, Meaning::Import),
        (LOADS, Meaning::Load),
        (REFLECTION, Meaning::Reflection),
        (&["getattr", "builtins.getattr"], Meaning::GetAttr),
    ];
    if let Some((_, m)) = tables.iter().find(|(list, _)| list.contains(&full)) {
        return *m;
    }
    if prefixed(NETWORK, full).is_some() {
        return Meaning::Network;
    }
    if prefixed(NATIVE, full).is_some() {
        return Meaning::Native;
    }
    let module_rest = |m: &str| full.strip_prefix(m).and_then(|r| r.strip_prefix('.'));
    if let Some(rest) = module_rest("os") {
        let head = rest.split('.').next().unwrap_or(rest);
        return if head == "path" || OS_HARMLESS.contains(&head) {
            Meaning::Harmless
        } else {
            Meaning::Unknown
        };
    }
    if let Some(rest) = module_rest("shutil") {
        return if SHUTIL_HARMLESS.contains(&rest) {
            Meaning::Harmless
        } else {
            Meaning::Unknown
        };
    }
    if full == "os" || full == "shutil" {
        return Meaning::Harmless;
    }
    if let Some(rest) = module_rest("subprocess") {
        return if rest.chars().next().is_some_and(char::is_uppercase) && rest != "Popen" {
            Meaning::Harmless
        } else {
            Meaning::Unknown
        };
    }
    if [
        "importlib",
        "runpy",
        "code",
        "codeop",
        "pty",
        "sys.modules",
        "multiprocessing.util",
    ]
    .iter()
    .any(|m| full == *m || full.starts_with(&format!("{m}.")))
    {
        return Meaning::Unknown;
    }
    Meaning::Harmless
}

/// The entry of `list` that `name` is or is under (`urllib.request.urlopen` → `urllib.request`).
pub(super) fn prefixed(list: &[&str], name: &str) -> Option<String> {
    list.iter()
        .find(|m| name == **m || name.starts_with(&format!("{m}.")))
        .map(|m| m.to_string())
}
