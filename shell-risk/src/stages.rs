//! What a simple command prints when it is known before it runs (`echo CODE`, `printf …`, `cat`
//! of a here-document), which a pipeline hands to the next stage as its input (`echo CODE |
//! python3` runs that code); and the declarations that print every variable.

use tree_sitter::Node;

use crate::rules::Stdin;
use crate::words::{Word, text};

/// `export`, `export -p`, `declare`, `declare -p`, `typeset -x` with no names: they print every
/// variable, secrets included.
pub(crate) fn prints_every_variable(node: Node<'_>, src: &str) -> bool {
    let mut cursor = node.walk();
    let mut keyword = "";
    for child in node.children(&mut cursor) {
        let t = text(child, src);
        if !child.is_named() {
            keyword = t;
            continue;
        }
        match child.kind() {
            "word" if t.starts_with('-') && t.chars().skip(1).all(|c| "pxg".contains(c)) => {}
            _ => return false,
        }
    }
    matches!(keyword, "export" | "declare" | "typeset")
}

/// What a simple command prints when it is known now: `echo` and `printf` with literal words,
/// `cat` of a here-document. Feeds `echo CODE | python3` its code.
pub(crate) fn known_output(words: &[Word], stdin: &Stdin) -> Option<String> {
    let lits: Option<Vec<&str>> = words.iter().map(Word::lit).collect();
    let lits = lits?;
    let (name, args) = lits.split_first()?;
    match *name {
        "echo" => {
            let mut escapes = false;
            let mut newline = true;
            let mut rest = args;
            while let Some((flag, tail)) = rest.split_first() {
                match *flag {
                    "-e" => escapes = true,
                    "-n" => newline = false,
                    "-E" => escapes = false,
                    "-ne" | "-en" => {
                        escapes = true;
                        newline = false;
                    }
                    _ => break,
                }
                rest = tail;
            }
            let mut out = rest.join(" ");
            if escapes {
                out = c_escapes(&out);
            }
            if newline {
                out.push('\n');
            }
            Some(out)
        }
        "printf" => {
            let (format, rest) = args.split_first()?;
            if rest.is_empty() && !format.contains('%') {
                Some(c_escapes(format))
            } else if matches!(*format, "%s" | "%s\\n" | "%b" | "%b\\n") {
                let sep = if format.ends_with('n') { "\n" } else { "" };
                Some(
                    rest.iter()
                        .map(|r| format!("{}{sep}", c_escapes(r)))
                        .collect(),
                )
            } else {
                None
            }
        }
        "cat" if args.is_empty() => match stdin {
            Stdin::Text(t) => Some(t.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `\n`, `\t` and `\\` as printf and `echo -e` read them.
fn c_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}
