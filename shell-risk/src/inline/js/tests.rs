//! The JavaScript reader's effects on small programs.

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
fn modules_are_followed_through_require_import_and_destructuring() {
    let rm = Effect::Delete(Some("/x".into()));
    has("require('fs').rmSync('/x', {recursive: true})", &rm);
    has("const fs = require('node:fs'); fs.rmSync('/x')", &rm);
    has("const {rmSync} = require('fs'); rmSync('/x')", &rm);
    has("const {rmSync: r} = require('fs'); r('/x')", &rm);
    has("import fs from 'fs'; fs.unlinkSync('/x')", &rm);
    has("import * as fs from 'fs'; fs.rmdirSync('/x')", &rm);
    has("import {rm} from 'fs/promises'; await rm('/x')", &rm);
    has("require('fs').promises.rm('/x')", &rm);
    has("const fse = require('fs-extra'); fse.removeSync('/x')", &rm);
    has("const p = '/x'; require('fs').rmSync(p)", &rm);
    has(
        "require('fs').writeFileSync(require('os').homedir() + '/.bashrc', 'x')",
        &Effect::Write(Some("~/.bashrc".into())),
    );
    has(
        "require('fs').writeFileSync(require('path').join('out', 'a.txt'), 'x')",
        &Effect::Write(Some("out/a.txt".into())),
    );
    has("require('fs').unlinkSync(f)", &Effect::Delete(None));
}

#[test]
fn processes_network_and_unreadable_code() {
    has(
        "require('child_process').execSync('ls -la')",
        &Effect::Shell(Some("ls -la".into())),
    );
    has(
        "require('child_process').spawnSync('git', ['status'])",
        &Effect::Exec(Some(vec!["git".into(), "status".into()])),
    );
    has(
        "require('child_process').spawn('rm', ['-rf', '/x'], {shell: true})",
        &Effect::Shell(Some("rm -rf /x".into())),
    );
    has("require('child_process').spawn(cmd)", &Effect::Exec(None));
    has("fetch('https://x')", &Effect::Network("fetch".into()));
    has(
        "require('https').get('https://x')",
        &Effect::Network("https".into()),
    );
    has("import net from 'net'", &Effect::Network("net".into()));
    unreadable("eval(x)");
    unreadable("new Function(body)()");
    unreadable("require(name)");
    unreadable("import(name)");
    unreadable("globalThis['ev' + 'al']('1')");
    unreadable("require('fs')[op]('/x')");
    unreadable("process.binding('fs')");
    unreadable("console.log(1");
    has(
        "eval('require(\"fs\").rmSync(\"/x\")')",
        &Effect::Delete(Some("/x".into())),
    );
    nothing_risky("setTimeout(() => console.log(1), 10)");
}

#[test]
fn the_environment_and_deno_and_bun() {
    has(
        "console.log(process.env.GH_TOKEN)",
        &Effect::SecretVariable("GH_TOKEN".into()),
    );
    has(
        "console.log(process.env['GH_TOKEN'])",
        &Effect::SecretVariable("GH_TOKEN".into()),
    );
    has("console.log(process.env)", &Effect::AllVariables);
    has("Deno.removeSync('/x')", &Effect::Delete(Some("/x".into())));
    has(
        "await Deno.writeTextFile('/x', 'a')",
        &Effect::Write(Some("/x".into())),
    );
    has("Bun.write('/x', 'a')", &Effect::Write(Some("/x".into())));
    has("new Deno.Command('rm')", &Effect::Exec(None));
}

#[test]
fn computing_and_printing_is_harmless() {
    for code in [
        "console.log(1 + 1)",
        "console.log(require('./package.json').version)",
        "console.log(JSON.stringify(JSON.parse(require('fs').readFileSync('a.json', 'utf8')), null, 2))",
        "const path = require('path'); console.log(path.resolve('src'))",
        "console.log(process.versions.node, process.platform, process.cwd())",
        "console.log(process.env.HOME)",
        "const xs = [3, 1, 2].sort(); for (const x of xs) console.log(x)",
        "console.log(require('os').cpus().length)",
        "console.log(Deno.version.deno)",
        "console.log(Bun.version)",
        "console.log(new Date().toISOString())",
    ] {
        nothing_risky(code);
    }
}
