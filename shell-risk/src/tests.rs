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

#[test]
fn every_phrase_key_is_its_name_in_lower_case_and_unique() {
    let mut keys = std::collections::BTreeSet::new();
    for (phrase, name) in phrases::ALL.iter().zip(phrases::NAMES) {
        assert_eq!(phrase.key, name.to_ascii_lowercase());
        assert!(keys.insert(phrase.key), "{} twice", phrase.key);
    }
    assert_eq!(phrases::ALL.len(), phrases::NAMES.len());
}

#[test]
fn a_reworded_phrase_rewords_composed_reasons_whole() {
    let a = classify("rm -r /tmp/x", &ctx());
    assert_eq!(
        a.summary(),
        "deletes recursively outside the working folder (/tmp/x)"
    );
    assert_eq!(a.reasons[0].message.key(), "deletes_outside");
    let wording = Wording::from_templates([
        ("deletes_recursively", "löscht rekursiv"),
        (
            "deletes_outside",
            "{how} außerhalb des Arbeitsordners ({path})",
        ),
    ])
    .unwrap();
    assert_eq!(
        a.summary_in(&wording),
        "löscht rekursiv außerhalb des Arbeitsordners (/tmp/x)"
    );
    // A phrase nested two deep (a place inside "everything in …") follows the wording too.
    let b = classify("rm -r ~/.config/*", &ctx());
    let wording = Wording::from_templates([("place_dotfile", "ein Punktordner")]).unwrap();
    assert!(
        b.summary_in(&wording)
            .contains("everything in ein Punktordner"),
        "{}",
        b.summary_in(&wording)
    );
    assert_eq!(
        classify("ls", &ctx())
            .summary_in(&Wording::from_templates([("only_reads", "liest nur")]).unwrap()),
        "only reads (ls)"
    );
    let empty = Assessment {
        risk: Risk::Safe,
        reasons: Vec::new(),
    };
    let wording =
        Wording::from_templates([("only_reads", "liest nur"), ("level_high", "hoch")]).unwrap();
    assert_eq!(empty.summary_in(&wording), "liest nur");
    assert_eq!(wording.level(Risk::High), "hoch");
    assert_eq!(wording.level(Risk::Safe), "safe");
}

#[test]
fn a_wording_with_an_unknown_key_or_placeholder_is_refused() {
    let e = Wording::from_templates([("deletes_recursivly", "x")]).unwrap_err();
    assert_eq!(e.to_string(), "`deletes_recursivly` is not a phrase's key");
    let e = Wording::from_templates([("deletes_outside", "{how} ({pfad})")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "deletes_outside: `{pfad}` is not one of its placeholders ({how}, {path})"
    );
    let e = Wording::from_templates([("deletes", "löscht {was}")]).unwrap_err();
    assert!(e.to_string().contains("(none)"), "{e}");
    let e = Wording::from_templates([("deletes", "löscht {")]).unwrap_err();
    assert!(e.to_string().contains("never closed"), "{e}");
}

#[test]
fn every_phrase_renders_its_english_with_its_arguments_filled() {
    for phrase in phrases::ALL {
        let mut message = Message::from(*phrase);
        for name in phrase.placeholders() {
            message = message.with(name, format!("<{name}>"));
        }
        let rendered = message.english();
        assert!(!rendered.contains('{'), "{}: {rendered}", phrase.key);
    }
}
