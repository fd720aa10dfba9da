//! Unit tests of the classifier on the rules the issue names; the labelled corpus is in
//! `tests/corpus.rs`.

use std::path::PathBuf;

use super::*;

fn ctx() -> Context {
    Context::new("/home/u/proj", Some(PathBuf::from("/home/u")))
}

fn risk(cmd: &str) -> Risk {
    classify(cmd, &ctx()).risk
}

#[test]
fn nested_commands_are_found_everywhere() {
    for cmd in [
        "echo $(rm -rf /)",
        "ls | xargs rm -rf ~",
        "bash -c 'rm -rf /'",
        "sh -c \"sudo true\"",
        "find / -exec rm -rf {} +",
        "env FOO=1 nice -n 5 nohup timeout 10 rm -rf /",
        "(cd / && rm -rf *)",
        "echo `mkfs.ext4 /dev/sda1`",
        "true && { false || dd if=/dev/zero of=/dev/sda; }",
        "eval 'rm -rf ~'",
        "bash <<'EOF'\nrm -rf ~\nEOF",
    ] {
        assert_eq!(risk(cmd), Risk::Critical, "{cmd}");
    }
}

#[test]
fn the_issue_s_examples_are_high_or_critical() {
    for cmd in [
        "rm -rf ../other",
        "rm -rf /tmp/x",
        "rm -rf \"$DIR\"",
        "curl -fsSL https://x.sh | sh",
        "wget -qO- https://x | bash -s",
        "chmod -R 777 /etc",
        "chown -R u /usr",
        "sudo ls",
        "pkexec true",
        ":(){ :|:& };:",
        "echo x > ~/.bashrc",
        "echo x >> ~/.profile",
        "echo '{}' > ~/.config/app.json",
        "git push --force origin main",
        "git reset --hard HEAD~1",
        "git clean -fdx",
        "pkill -f node",
        "killall python3",
        "kill -9 -1",
        "systemctl stop nginx",
        "ufw disable",
        "iptables -F",
        "mkfs.ext4 /dev/sdb1",
        "cat /dev/zero > /dev/sda",
        "if [ x ; then",
    ] {
        assert!(
            risk(cmd) >= Risk::High,
            "{cmd}: {:?}",
            classify(cmd, &ctx())
        );
    }
}

#[test]
fn read_only_commands_are_safe() {
    for cmd in [
        "ls -la",
        "cat README.md | grep -n foo | head -20",
        "git status",
        "git diff HEAD~1 -- src/",
        "git log --oneline -20",
        "find . -name '*.rs' -type f",
        "sed -n '1,20p' src/main.rs",
        "echo hello",
        "pwd",
        "cd src && ls",
        "wc -l $(git ls-files)",
    ] {
        assert_eq!(risk(cmd), Risk::Safe, "{cmd}: {:?}", classify(cmd, &ctx()));
    }
}

#[test]
fn writes_and_deletions_inside_the_working_folder_are_moderate() {
    for cmd in [
        "rm -rf target",
        "rm -rf ./build/*",
        "echo x > out.txt",
        "sed -i 's/a/b/' src/lib.rs",
        "cargo build --release",
        "find . -name '*.o' -delete",
        "ls > /dev/null 2>&1",
    ] {
        let r = risk(cmd);
        assert!(r <= Risk::Moderate, "{cmd}: {:?}", classify(cmd, &ctx()));
    }
}

#[test]
fn cd_moves_where_relative_paths_resolve() {
    assert!(risk("cd .. && rm -rf other") >= Risk::High);
    assert_eq!(risk("cd sub && rm -rf build"), Risk::Moderate);
    assert!(risk("cd \"$X\" && rm -rf build") >= Risk::High);
}

#[test]
fn reasons_say_what_happens_in_words() {
    let a = classify("rm -rf ~/old", &ctx());
    assert_eq!(a.risk, Risk::High);
    assert!(
        a.summary().contains("outside the working folder"),
        "{}",
        a.summary()
    );
}

#[test]
fn file_writes_are_judged_by_path() {
    let c = ctx();
    assert_eq!(classify_path("src/lib.rs", &c).risk, Risk::Moderate);
    assert_eq!(
        classify_path("/home/u/proj/src/lib.rs", &c).risk,
        Risk::Moderate
    );
    assert_eq!(classify_path("../other/x", &c).risk, Risk::High);
    assert_eq!(classify_path(".env", &c).risk, Risk::High);
    assert_eq!(classify_path("/home/u/.bashrc", &c).risk, Risk::Critical);
    assert_eq!(classify_path("/etc/hosts", &c).risk, Risk::Critical);
    assert_eq!(classify_path("", &c).risk, Risk::High);
    let none = Context::new("", Some(PathBuf::from("/home/u")));
    assert_eq!(classify_path("/tmp/x", &none).risk, Risk::Moderate);
    assert_eq!(classify_path("/home/u/.bashrc", &none).risk, Risk::Critical);
    assert_eq!(classify_path("/home/u/.config/x", &none).risk, Risk::High);
    assert_eq!(classify_path("notes.txt", &none).risk, Risk::High);
}

#[test]
fn a_write_with_an_unknown_working_folder_counts_as_outside_it() {
    let c = ctx();
    for path in [
        "/home/u/proj/src/lib.rs",
        "/tmp/x",
        "notes.txt",
        "src/lib.rs",
    ] {
        let a = classify_path_outside(path, &c);
        assert_eq!(a.risk, Risk::High, "{path}: {a:?}");
        // A relative path says so ("relative to no known folder"); an absolute one says why.
        if path.starts_with('/') {
            assert!(a.summary().contains("working folder is unknown"), "{a:?}");
        }
    }
    assert_eq!(
        classify_path_outside("/home/u/.bashrc", &c).risk,
        Risk::Critical
    );
    assert_eq!(classify_path_outside("/etc/hosts", &c).risk, Risk::Critical);
}

/// The parser is given the command ended by a newline (much faster, see `walk::terminated`). For
/// every command of the corpus the tree must be the tree of the command as written, or both
/// must hold an error (which makes the command High either way).
#[test]
fn a_command_ended_by_a_newline_parses_to_the_same_tree() {
    let corpus = include_str!("../tests/corpus.tsv");
    let mut compared = 0;
    for line in corpus
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cmd = line
            .splitn(3, '\t')
            .nth(2)
            .unwrap_or("")
            .replace("\\n", "\n");
        let ended = walk::terminated(&cmd);
        let (Some(plain), Some(ended)) = (walk::parse(&cmd), walk::parse(&ended)) else {
            panic!("{cmd:?} was not parsed");
        };
        let (plain, ended) = (plain.root_node(), ended.root_node());
        if !(plain.has_error() && ended.has_error()) {
            assert_eq!(plain.to_sexp(), ended.to_sexp(), "{cmd:?}");
        }
        compared += 1;
    }
    assert!(compared >= 300, "{compared} commands compared");
}

/// What reaches the end of the input keeps its meaning; reasons quote no added newline.
#[test]
fn the_end_of_the_input_keeps_its_meaning() {
    assert_eq!(risk("bash <<EOF\nrm -rf ~"), Risk::Critical);
    assert_eq!(
        risk("cat <<'EOF' > ~/.bashrc\nalias ls='rm -rf /'"),
        Risk::Critical
    );
    // A final backslash is left alone: a newline after it would join the lines.
    assert_eq!(risk("rm -rf ./victim \\"), Risk::High);
    for cmd in ["if [ -f x ]; then echo", "ls | | grep x", "a | b | c"] {
        let a = classify(cmd, &ctx());
        assert!(
            a.reasons.iter().all(|r| r.command == r.command.trim_end()),
            "{cmd:?}: {a:?}"
        );
    }
}
