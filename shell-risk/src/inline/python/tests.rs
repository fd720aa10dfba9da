//! The Python reader's effects on small programs.

use super::super::Effect;
use super::effects;

fn of(code: &str) -> Vec<Effect> {
    effects(code, 0)
}

fn has(code: &str, want: &Effect) {
    let got = of(code);
    assert!(got.contains(want), "{code}: {got:?} lacks {want:?}");
}

fn unreadable(code: &str) {
    let got = of(code);
    assert!(
        got.iter().any(|e| matches!(e, Effect::Unreadable(..))),
        "{code}: {got:?}"
    );
}

fn nothing_risky(code: &str) {
    let got = of(code);
    let risky: Vec<&Effect> = got
        .iter()
        .filter(|e| !matches!(e, Effect::Read(_) | Effect::SecretVariable(_)))
        .collect();
    assert!(risky.is_empty(), "{code}: {risky:?}");
}

#[test]
fn names_follow_imports_aliases_and_assignments() {
    let rm = Effect::Delete(Some("/x".into()));
    has("import shutil; shutil.rmtree('/x')", &rm);
    has("import shutil as s; s.rmtree('/x')", &rm);
    has("from shutil import rmtree; rmtree('/x')", &rm);
    has("from shutil import rmtree as r; r('/x')", &rm);
    has("from shutil import *; rmtree('/x')", &rm);
    has("import shutil; p = '/x'; shutil.rmtree(p)", &rm);
    has("s = __import__('shutil'); s.rmtree('/x')", &rm);
    has(
        "import importlib; importlib.import_module('shutil').rmtree('/x')",
        &rm,
    );
    has("import os; os.remove(os.path.join('/x'))", &rm);
    has("from pathlib import Path; Path('/x').unlink()", &rm);
    has("import pathlib; p = pathlib.Path('/x'); p.rmdir()", &rm);
}

#[test]
fn paths_are_worked_out_when_known() {
    has(
        "import os; open(os.path.expanduser('~/.bashrc'), 'a')",
        &Effect::Write(Some("~/.bashrc".into())),
    );
    has(
        "from pathlib import Path; (Path.home() / '.ssh' / 'id_rsa').read_text()",
        &Effect::Read("~/.ssh/id_rsa".into()),
    );
    has(
        "import os; os.remove(os.environ['HOME'] + '/x')",
        &Effect::Delete(Some("~/x".into())),
    );
    has(
        "import glob, os\nfor f in glob.glob('build/*.o'):\n    os.remove(f)",
        &Effect::Delete(Some("build/*.o".into())),
    );
    has(
        "import os, glob; [os.remove(f) for f in glob.glob('b/*.o')]",
        &Effect::Delete(Some("b/*.o".into())),
    );
    has(
        "import os\nfor f in os.listdir('.'):\n    os.remove(f)",
        &Effect::Delete(None),
    );
    has("open(name, 'w')", &Effect::Write(None));
    has("open('a.txt', mode)", &Effect::Write(Some("a.txt".into())));
    has("open('a.txt')", &Effect::Read("a.txt".into()));
    has(
        "import shutil; shutil.copy('/k', '/tmp/k')",
        &Effect::Read("/k".into()),
    );
    has(
        "import shutil; shutil.move('a', '/tmp/a')",
        &Effect::Write(Some("/tmp/a".into())),
    );
    has(
        "import pandas as pd; df.to_csv('/tmp/x.csv')",
        &Effect::Write(Some("/tmp/x.csv".into())),
    );
}

#[test]
fn processes_are_their_command_lines() {
    has(
        "import os; os.system('ls -la')",
        &Effect::Shell(Some("ls -la".into())),
    );
    has(
        "import subprocess; subprocess.run(['git', 'status'])",
        &Effect::Exec(Some(vec!["git".into(), "status".into()])),
    );
    has(
        "import subprocess; subprocess.run(['rm', '-rf', '/x'], shell=True)",
        &Effect::Shell(Some("rm -rf /x".into())),
    );
    has(
        "import subprocess; subprocess.Popen(cmd)",
        &Effect::Exec(None),
    );
    has("import os; os.execvp('sh', ['sh'])", &Effect::Exec(None));
    has("import os; list(map(os.system, cmds))", &Effect::Exec(None));
    has("f = __import__('os').system; f('id')", &Effect::Exec(None));
}

#[test]
fn the_network_native_code_and_reflection_are_named() {
    has("import requests", &Effect::Network("requests".into()));
    has(
        "import urllib.request",
        &Effect::Network("urllib.request".into()),
    );
    has(
        "from urllib import request",
        &Effect::Network("urllib.request".into()),
    );
    has("import socket as s", &Effect::Network("socket".into()));
    nothing_risky("import urllib.parse; urllib.parse.quote('a b')");
    unreadable("import ctypes");
    unreadable("exec(data)");
    unreadable("eval(input())");
    unreadable("getattr(os, name)()");
    unreadable("__import__(name)");
    unreadable("().__class__.__bases__[0].__subclasses__()");
    unreadable("globals()['x']");
    unreadable("import pickle; pickle.loads(b)");
    unreadable("print(1");
    // Code given as text is read in turn.
    has(
        "exec('import os; os.system(\"id\")')",
        &Effect::Shell(Some("id".into())),
    );
    nothing_risky("exec(compile('print(1)', 'x', 'exec'))");
}

#[test]
fn the_environment_is_a_secret_by_name_or_whole() {
    has(
        "import os; os.environ['TOKEN_X']",
        &Effect::SecretVariable("TOKEN_X".into()),
    );
    has(
        "import os; os.getenv('A_KEY')",
        &Effect::SecretVariable("A_KEY".into()),
    );
    has("import os; print(os.environ)", &Effect::AllVariables);
    has("import os; dict(os.environ.items())", &Effect::AllVariables);
}

#[test]
fn computing_and_printing_is_harmless() {
    for code in [
        "print(1 + 1)",
        "import sys; print(sys.version_info)",
        "import json; print(json.dumps({'a': 1}, indent=2))",
        "import os; print(os.getcwd(), os.listdir('.'), os.path.exists('x'))",
        "import re, collections; print(collections.Counter(re.findall(r'\\w+', 'a b a')))",
        "from datetime import datetime; print(datetime.now().isoformat())",
        "import math\nfor i in range(3):\n    print(math.sqrt(i))",
        "x = [i * i for i in range(10)]; print(sum(x))",
        "import hashlib; print(hashlib.sha256(b'x').hexdigest())",
        "import subprocess; print(subprocess.PIPE)",
        "s = 'a-b'; print(s.replace('-', '_'))",
    ] {
        nothing_risky(code);
    }
}
