//! The Perl, Ruby and PHP readers' effects on small programs, and the tokenizer's limits.

use super::{Effect, Lang, read};

fn of(lang: Lang, code: &str) -> Vec<Effect> {
    read(lang, code, 0)
}

fn has(lang: Lang, code: &str, want: &Effect) {
    let got = of(lang, code);
    assert!(got.contains(want), "{code}: {got:?} lacks {want:?}");
}

fn unreadable(lang: Lang, code: &str) {
    let got = of(lang, code);
    assert!(
        got.iter().any(|e| matches!(e, Effect::Unreadable(..))),
        "{code}: {got:?}"
    );
}

fn nothing_risky(lang: Lang, code: &str) {
    let got = of(lang, code);
    let risky: Vec<&Effect> = got
        .iter()
        .filter(|e| !matches!(e, Effect::Read(_) | Effect::SecretVariable(_)))
        .collect();
    assert!(risky.is_empty(), "{code}: {risky:?}");
}

#[test]
fn perl() {
    use Lang::Perl as P;
    has(
        P,
        "system('rm -rf ~')",
        &Effect::Shell(Some("rm -rf ~".into())),
    );
    has(
        P,
        "system 'rm', '-rf', '/x'",
        &Effect::Exec(Some(vec!["rm".into(), "-rf".into(), "/x".into()])),
    );
    has(P, "system($cmd)", &Effect::Exec(None));
    has(P, "print `id`", &Effect::Shell(Some("id".into())));
    has(P, "print qx{ls $dir}", &Effect::Shell(None));
    has(P, "unlink '/x', '/y'", &Effect::Delete(Some("/y".into())));
    has(
        P,
        "unlink glob('/x/*')",
        &Effect::Delete(Some("/x/*".into())),
    );
    has(P, "unlink $f", &Effect::Delete(None));
    has(
        P,
        "use File::Path qw(rmtree); rmtree('/x')",
        &Effect::Delete(Some("/x".into())),
    );
    has(
        P,
        "open(my $f, '>', '/x')",
        &Effect::Write(Some("/x".into())),
    );
    has(P, "open(F, \">>/x\")", &Effect::Write(Some("/x".into())));
    has(P, "open(F, '<', '/k')", &Effect::Read("/k".into()));
    has(
        P,
        "open(F, '-|', 'ls', '-l')",
        &Effect::Shell(Some("ls -l".into())),
    );
    has(P, "open(F, 'ls |')", &Effect::Shell(Some("ls".into())));
    has(P, "rename 'a', '/x'", &Effect::Write(Some("/x".into())));
    has(
        P,
        "print $ENV{GH_TOKEN}",
        &Effect::SecretVariable("GH_TOKEN".into()),
    );
    has(P, "print %ENV", &Effect::AllVariables);
    has(
        P,
        "use LWP::Simple; get('http://x')",
        &Effect::Network("LWP::Simple".into()),
    );
    has(P, "s/x/system('id')/e", &Effect::Shell(Some("id".into())));
    unreadable(P, "s/x/$y/ee");
    unreadable(P, "eval $code");
    unreadable(P, "&$f()");
    unreadable(P, "do 'file.pl'");
    unreadable(P, "print 'unterminated");
    for code in [
        "print \"hello\\n\"",
        "print if /foo/",
        "s/foo/bar/g",
        "s{a}{b}gr",
        "tr/a-z/A-Z/",
        "my @a = split /,/, $_; print $a[1]",
        "print join ',', map { $_ * 2 } grep { $_ % 2 } 1..10",
        "my %h = (exec => 1); print $h{system}",
        "use strict; use warnings; print scalar(localtime)",
        "open(my $f, '<', 'a.txt') or die; print while <$f>",
        "$x = 10 / 2; print $x",
        "print <<EOT;\nsystem('not code')\nEOT\n",
    ] {
        nothing_risky(P, code);
    }
}

#[test]
fn ruby() {
    use Lang::Ruby as R;
    has(
        R,
        "system('rm -rf ~')",
        &Effect::Shell(Some("rm -rf ~".into())),
    );
    has(R, "puts `id`", &Effect::Shell(Some("id".into())));
    has(R, "puts %x(ls #{d})", &Effect::Shell(None));
    has(
        R,
        "File.write('/x', 'a')",
        &Effect::Write(Some("/x".into())),
    );
    has(R, "File.delete('/x')", &Effect::Delete(Some("/x".into())));
    has(
        R,
        "FileUtils.rm_rf('/x')",
        &Effect::Delete(Some("/x".into())),
    );
    has(
        R,
        "File.write(File.expand_path('~/.bashrc'), 'x')",
        &Effect::Write(Some("~/.bashrc".into())),
    );
    has(R, "open('|id')", &Effect::Shell(Some("id".into())));
    has(R, "File.open('/x', 'w')", &Effect::Write(Some("/x".into())));
    has(
        R,
        "puts ENV['GH_TOKEN']",
        &Effect::SecretVariable("GH_TOKEN".into()),
    );
    has(R, "puts ENV.to_h", &Effect::AllVariables);
    has(R, "require 'net/http'", &Effect::Network("net/http".into()));
    has(
        R,
        "Net::HTTP.get(URI('http://x'))",
        &Effect::Network("Net::HTTP".into()),
    );
    unreadable(R, "eval(code)");
    unreadable(R, "x.public_send(name)");
    unreadable(R, "obj.instance_eval(s)");
    unreadable(R, "Marshal.load(data)");
    for code in [
        "puts 1 + 2",
        "puts File.read('Gemfile')",
        "require 'json'; puts JSON.pretty_generate(JSON.parse(File.read('a.json')))",
        "puts [3, 1, 2].sort.map { |x| x * 2 }.inspect",
        "h = {system: 1, exec: 2}; p h[:system]",
        "puts RUBY_VERSION; puts ENV['HOME']",
        "puts Dir.glob('src/**/*.rb').size",
        "x = 'a-b'.gsub('-', '_'); puts x",
    ] {
        nothing_risky(R, code);
    }
}

#[test]
fn php() {
    use Lang::Php as H;
    has(
        H,
        "system('rm -rf ~');",
        &Effect::Shell(Some("rm -rf ~".into())),
    );
    has(H, "echo `id`;", &Effect::Shell(Some("id".into())));
    has(H, "unlink('/x');", &Effect::Delete(Some("/x".into())));
    has(
        H,
        "file_put_contents('/x', 'a');",
        &Effect::Write(Some("/x".into())),
    );
    has(
        H,
        "echo file_get_contents('/k');",
        &Effect::Read("/k".into()),
    );
    has(
        H,
        "file_get_contents('https://x');",
        &Effect::Network("file_get_contents".into()),
    );
    has(
        H,
        "$f = fopen('/x', 'w');",
        &Effect::Write(Some("/x".into())),
    );
    has(
        H,
        "echo getenv('DB_PASSWORD');",
        &Effect::SecretVariable("DB_PASSWORD".into()),
    );
    has(H, "print_r($_ENV);", &Effect::AllVariables);
    has(
        H,
        "curl_exec(curl_init('http://x'));",
        &Effect::Network("curl_exec".into()),
    );
    has(
        H,
        "some_unknown_function();",
        &Effect::Unknown("some_unknown_function".into()),
    );
    has(
        H,
        "new PDO('sqlite:x');",
        &Effect::Unknown("new PDO".into()),
    );
    unreadable(H, "eval($code);");
    unreadable(H, "$f($x);");
    unreadable(H, "call_user_func($name);");
    unreadable(H, "unserialize($s);");
    for code in [
        "echo PHP_VERSION, PHP_EOL;",
        "$a = [3, 1, 2]; sort($a); print_r($a);",
        "echo json_encode(json_decode(file_get_contents('composer.json')), JSON_PRETTY_PRINT);",
        "function twice($x) { return $x * 2; } echo twice(2);",
        "echo strtoupper(str_replace('-', '_', 'a-b'));",
        "$d = new DateTime(); echo $d->format('Y');",
        "echo array_sum(array_map(fn($x) => $x * 2, [1, 2]));",
    ] {
        nothing_risky(H, code);
    }
}

#[test]
fn long_expressions_and_many_here_documents_stay_bounded() {
    // Thousands of terms: the value is not worked out, so the deletion's path is unknown.
    let sum = vec!["'a'"; 5000].join(" + ");
    let code = format!("import os; os.remove({sum})");
    assert!(of(Lang::Python, &code).contains(&Effect::Delete(None)));
    let sum = vec!["'a'"; 5000].join(" + ");
    let code = format!("require('fs').rmSync({sum})");
    assert!(of(Lang::JavaScript, &code).contains(&Effect::Delete(None)));
    // Two here-documents on one line are read one after the other.
    let two = "print <<A, <<B;\nsystem('x')\nA\nsystem('y')\nB\nprint 1;\n";
    nothing_risky(Lang::Perl, two);
    let many = "print <<A;\nx\nA\n".repeat(100);
    unreadable(Lang::Perl, &many);
}
