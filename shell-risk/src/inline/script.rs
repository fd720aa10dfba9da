//! Perl, Ruby and PHP inline code, which has no grammar in this crate: a tokenizer that knows
//! each language's strings, quote-like operators, regular expressions, here-documents, comments
//! and variables, then tables of what each name does ([`super::script_tables`]). The reading is
//! deliberately narrow: a string whose meaning depends on interpolation is unknown now, a token
//! the tokenizer cannot close (an unterminated string or delimiter) makes the code unreadable,
//! and for PHP any function not on its list of harmless functions is not known to be harmless.

use super::script_tables::{judge_perl, judge_php, judge_ruby};
use super::{Effect, Lang, Why};

/// One token of inline code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    /// A name: `unlink`, `File`, `FileUtils`, `Net::HTTP` (Perl's and Ruby's `::` kept),
    /// `\Foo\bar` (PHP's backslashes dropped at the front).
    Ident(String),
    /// A variable with its sigil: `$x`, `@ARGV`, `%ENV`, `$_ENV`.
    Var(String),
    /// A string: its text, and whether interpolation makes it known only when it runs.
    Str {
        text: String,
        dynamic: bool,
    },
    /// A command in backticks (`qx{}`, `%x()`): its text and whether it is dynamic.
    Command {
        text: String,
        dynamic: bool,
    },
    /// A Perl substitution's replacement that is code (`s/…/…/e`): the code, and whether the
    /// result is evaluated again (`ee`).
    SubstCode {
        code: String,
        twice: bool,
    },
    Punct(String),
    Number,
}

/// The effects of `code` in Perl, Ruby or PHP.
pub(super) fn effects(lang: Lang, code: &str) -> Vec<Effect> {
    let toks = match tokenize(lang, code) {
        Ok(t) => t,
        Err(why) => return vec![Effect::Unreadable(Why::Unparsable, why)],
    };
    let mut out = Vec::new();
    match lang {
        Lang::Perl => judge_perl(&toks, &mut out),
        Lang::Ruby => judge_ruby(&toks, &mut out),
        Lang::Php => judge_php(&toks, &mut out),
        Lang::Python | Lang::JavaScript => {}
    }
    let mut unique: Vec<Effect> = Vec::with_capacity(out.len());
    for e in out {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    unique
}

struct Lexer<'s> {
    lang: Lang,
    chars: Vec<char>,
    i: usize,
    toks: Vec<Tok>,
    /// Here-document bodies already read, to step over when the lexer reaches them.
    bodies: Vec<(usize, usize)>,
    /// How many here-documents were read (bounded: [`MAX_HEREDOCS`]).
    heredocs: usize,
    _src: &'s str,
}

/// Most here-documents one piece of code may hold (each is looked for up to its end).
const MAX_HEREDOCS: usize = 64;

/// Splits `code` into tokens; the error says what was left open.
pub(super) fn tokenize(lang: Lang, code: &str) -> Result<Vec<Tok>, String> {
    let mut l = Lexer {
        lang,
        chars: code.chars().collect(),
        i: 0,
        toks: Vec::new(),
        bodies: Vec::new(),
        heredocs: 0,
        _src: code,
    };
    l.run()?;
    Ok(l.toks)
}

fn closer(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        c => c,
    }
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    /// Whether the next token is a term (so `/` starts a regular expression, not a division).
    fn expects_term(&self) -> bool {
        match self.toks.last() {
            None => true,
            Some(Tok::Punct(p)) => !matches!(p.as_str(), ")" | "]" | "}"),
            Some(Tok::Ident(w)) => matches!(
                w.as_str(),
                "split"
                    | "grep"
                    | "map"
                    | "join"
                    | "if"
                    | "unless"
                    | "and"
                    | "or"
                    | "not"
                    | "return"
                    | "when"
                    | "while"
                    | "until"
                    | "push"
                    | "unshift"
                    | "x"
                    | "lt"
                    | "gt"
                    | "le"
                    | "ge"
                    | "eq"
                    | "ne"
                    | "cmp"
            ),
            _ => false,
        }
    }

    /// Whether the last token is a value (so `%` and `/` after it are operators).
    fn after_value(&self) -> bool {
        match self.toks.last() {
            Some(Tok::Var(_) | Tok::Number | Tok::Str { .. } | Tok::Command { .. }) => true,
            Some(Tok::Punct(p)) => matches!(p.as_str(), ")" | "]" | "}"),
            _ => false,
        }
    }

    fn run(&mut self) -> Result<(), String> {
        loop {
            while let Some(&(start, end)) = self.bodies.first() {
                if self.i < start {
                    break;
                }
                self.i = self.i.max(end);
                self.bodies.remove(0);
            }
            let Some(c) = self.peek(0) else {
                break;
            };
            match c {
                c if c.is_whitespace() => self.i += 1,
                '#' => self.line_comment(),
                '%' if self.lang == Lang::Ruby && self.ruby_percent()? => {}
                '/' if self.lang == Lang::Php && self.peek(1) == Some('/') => self.line_comment(),
                '/' if self.peek(1) == Some('*') && self.lang == Lang::Php => {
                    self.block_comment()?
                }
                '\'' | '"' => {
                    self.i += 1;
                    let interpolates = c == '"';
                    self.string(c, c, interpolates)?;
                }
                '`' => {
                    self.i += 1;
                    let (text, dynamic) = self.delimited('`', '`', true)?;
                    self.toks.push(Tok::Command { text, dynamic });
                }
                '$' | '@' | '%' if self.sigil_var() => {}
                '/' if self.lang != Lang::Php && self.expects_term() => {
                    self.i += 1;
                    self.delimited('/', '/', true)?;
                    self.flags();
                    self.toks.push(Tok::Str {
                        text: String::new(),
                        dynamic: false,
                    });
                }
                '<' if self.peek(1) == Some('<') && self.heredoc()? => {}
                c if c.is_alphabetic() || c == '_' || (c == '\\' && self.lang == Lang::Php) => {
                    self.word()?
                }
                c if c.is_ascii_digit() => {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
                    {
                        self.i += 1;
                    }
                    self.toks.push(Tok::Number);
                }
                ':' if self.peek(1) == Some(':') => self.punct(2),
                '-' if self.peek(1) == Some('>') => self.punct(2),
                '=' if self.peek(1) == Some('>') => self.punct(2),
                '=' if self.peek(1) == Some('~') => self.punct(2),
                _ => self.punct(1),
            }
        }
        Ok(())
    }

    fn punct(&mut self, n: usize) {
        let p: String = self.chars[self.i..(self.i + n).min(self.chars.len())]
            .iter()
            .collect();
        self.i += n;
        self.toks.push(Tok::Punct(p));
    }

    fn line_comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.i += 1;
        }
    }

    fn block_comment(&mut self) -> Result<(), String> {
        self.i += 2;
        while self.i + 1 < self.chars.len() {
            if self.chars[self.i] == '*' && self.chars[self.i + 1] == '/' {
                self.i += 2;
                return Ok(());
            }
            self.i += 1;
        }
        Err(": a comment is never closed".into())
    }

    /// A quoted string opened just before `self.i`.
    fn string(&mut self, open: char, close: char, interpolates: bool) -> Result<(), String> {
        let (text, dynamic) = self.delimited(open, close, interpolates)?;
        self.toks.push(Tok::Str { text, dynamic });
        Ok(())
    }

    /// Reads up to the `close` that ends a run opened by `open` (nesting when they differ);
    /// the text, and whether it interpolates something.
    fn delimited(
        &mut self,
        open: char,
        close: char,
        interpolates: bool,
    ) -> Result<(String, bool), String> {
        let mut depth = 0usize;
        let mut text = String::new();
        let mut dynamic = false;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '\\' => {
                    if let Some(n) = self.peek(0) {
                        self.i += 1;
                        match n {
                            'n' if interpolates => text.push('\n'),
                            't' if interpolates => text.push('\t'),
                            n => text.push(n),
                        }
                    }
                }
                c if c == close && depth == 0 => return Ok((text, dynamic)),
                c if c == close => {
                    depth -= 1;
                    text.push(c);
                }
                c if c == open && open != close => {
                    depth += 1;
                    text.push(c);
                }
                '$' | '@' if interpolates && self.interpolation_follows(c) => {
                    dynamic = true;
                    text.push(c);
                }
                '#' if interpolates && self.lang == Lang::Ruby && self.peek(0) == Some('{') => {
                    dynamic = true;
                    text.push(c);
                }
                '{' if interpolates && self.lang == Lang::Php && self.peek(0) == Some('$') => {
                    dynamic = true;
                    text.push(c);
                }
                c => text.push(c),
            }
        }
        Err(format!(": a `{open}` is never closed"))
    }

    /// Whether the sigil `c` just read starts an interpolated variable.
    fn interpolation_follows(&self, c: char) -> bool {
        if c == '@' && self.lang != Lang::Perl {
            return self.lang == Lang::Ruby
                && self.peek(0).is_some_and(|n| n == '@' || n.is_alphabetic());
        }
        if self.lang == Lang::Ruby {
            return false;
        }
        self.peek(0)
            .is_some_and(|n| n.is_alphanumeric() || matches!(n, '_' | '{' | ':' | '$'))
    }

    /// Ruby's `%w[…]`, `%q(…)`, `%Q{…}`, `%x(…)`, `%r{…}`, `%i[…]` and bare `%(…)`: true when
    /// one was read.
    fn ruby_percent(&mut self) -> Result<bool, String> {
        if self.after_value() {
            return Ok(false);
        }
        let (kind, open_at) = match self.peek(1) {
            Some(k) if "qQwWiIxrs".contains(k) => (k, 2),
            Some(_) => ('Q', 1),
            None => return Ok(false),
        };
        let Some(open) = self.peek(open_at).filter(|c| "([{<|!/".contains(*c)) else {
            return Ok(false);
        };
        self.i += open_at + 1;
        let interpolates = matches!(kind, 'Q' | 'W' | 'I' | 'x' | 'r');
        let (text, dynamic) = self.delimited(open, closer(open), interpolates)?;
        match kind {
            'x' => self.toks.push(Tok::Command { text, dynamic }),
            'r' => {
                self.flags();
                self.toks.push(Tok::Str {
                    text: String::new(),
                    dynamic: false,
                });
            }
            _ => self.toks.push(Tok::Str { text, dynamic }),
        }
        Ok(true)
    }

    /// Regex flags after a closing delimiter.
    fn flags(&mut self) -> String {
        let mut f = String::new();
        while let Some(c) = self.peek(0).filter(|c| c.is_ascii_alphabetic()) {
            f.push(c);
            self.i += 1;
        }
        f
    }

    /// `$x`, `@x`, `%x`, `$_ENV`, `${…}`: true when one was read.
    fn sigil_var(&mut self) -> bool {
        let c = self.chars[self.i];
        let next = self.peek(1);
        let starts = next.is_some_and(|n| {
            n.is_alphabetic()
                || n == '_'
                || n == '{'
                || n == ':'
                || (c == '$' && !n.is_whitespace() && n != ')' && n != ';')
        });
        if c == '%' && (self.lang != Lang::Perl || self.after_value()) {
            return false;
        }
        if c == '@' && self.lang == Lang::Php {
            return false;
        }
        if !starts {
            return false;
        }
        self.i += 1;
        let mut name = String::from(c);
        while let Some(n) = self
            .peek(0)
            .filter(|n| n.is_alphanumeric() || *n == '_' || *n == ':')
        {
            name.push(n);
            self.i += 1;
        }
        if name.len() == 1 {
            // `$$`, `$_`, `${`: one more character belongs to it.
            if let Some(n) = self.peek(0).filter(|n| !n.is_whitespace() && *n != '{') {
                name.push(n);
                self.i += 1;
            }
        }
        self.toks.push(Tok::Var(name));
        true
    }

    /// A name, or a quote-like operator that starts with one (`qw(…)`, `s/…/…/e`, `%w[…]`).
    fn word(&mut self) -> Result<(), String> {
        let start = self.i;
        while self
            .peek(0)
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '\\' && self.lang == Lang::Php)
        {
            self.i += 1;
        }
        // Ruby's `exist?` and `delete!`.
        if self.lang == Lang::Ruby
            && self.peek(0).is_some_and(|c| c == '?' || c == '!')
            && self.peek(1) != Some('=')
        {
            self.i += 1;
        }
        // `File::Path`, `Net::HTTP`: one name.
        while self.lang != Lang::Php
            && self.peek(0) == Some(':')
            && self.peek(1) == Some(':')
            && self.peek(2).is_some_and(|c| c.is_alphabetic())
        {
            self.i += 2;
            while self
                .peek(0)
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                self.i += 1;
            }
        }
        let word: String = self.chars[start..self.i].iter().collect();
        if self.lang == Lang::Perl && self.quote_like(&word)? {
            return Ok(());
        }
        let word = word.trim_start_matches('\\').replace('\\', "::");
        self.toks.push(Tok::Ident(word));
        Ok(())
    }

    /// Perl's `q qq qw qx m qr s tr y` with any delimiter.
    fn quote_like(&mut self, word: &str) -> Result<bool, String> {
        if !matches!(
            word,
            "q" | "qq" | "qw" | "qx" | "m" | "qr" | "s" | "tr" | "y"
        ) {
            return Ok(false);
        }
        let mut j = self.i;
        while self.chars.get(j).is_some_and(|c| c.is_whitespace()) {
            j += 1;
        }
        let Some(&open) = self.chars.get(j) else {
            return Ok(false);
        };
        if open.is_alphanumeric()
            || open == '_'
            || open == ','
            || open == ';'
            || (open == '=' && self.chars.get(j + 1) == Some(&'>'))
            || open == ')'
        {
            return Ok(false);
        }
        self.i = j + 1;
        let close = closer(open);
        let interpolates = matches!(word, "qq" | "qx" | "m" | "qr" | "s") && open != '\'';
        let (first, dynamic) = self.delimited(open, close, interpolates)?;
        match word {
            "s" | "tr" | "y" => {
                if open != close {
                    while self.peek(0).is_some_and(|c| c.is_whitespace()) {
                        self.i += 1;
                    }
                    let o2 = self.peek(0).ok_or(": a substitution is never closed")?;
                    self.i += 1;
                    let (second, _) = self.delimited(o2, closer(o2), false)?;
                    self.subst_end(word, second);
                } else {
                    let (second, _) = self.delimited(open, close, false)?;
                    self.subst_end(word, second);
                }
            }
            "qx" => self.toks.push(Tok::Command {
                text: first,
                dynamic,
            }),
            "m" | "qr" => {
                self.flags();
                self.toks.push(Tok::Str {
                    text: String::new(),
                    dynamic: false,
                });
            }
            _ => self.toks.push(Tok::Str {
                text: first,
                dynamic,
            }),
        }
        Ok(true)
    }

    fn subst_end(&mut self, word: &str, replacement: String) {
        let flags = self.flags();
        let evals = flags.matches('e').count();
        if word == "s" && evals > 0 {
            self.toks.push(Tok::SubstCode {
                code: replacement,
                twice: evals > 1,
            });
        } else {
            self.toks.push(Tok::Str {
                text: String::new(),
                dynamic: false,
            });
        }
    }

    /// `<<"EOF"`, `<<'EOF'`, `<<EOF`, `<<~EOF`, `<<-EOF`, PHP's `<<<EOT`: the body up to the
    /// terminator line is a string. False when `<<` is a shift or an append.
    fn heredoc(&mut self) -> Result<bool, String> {
        let mut j = self.i + 2;
        if self.lang == Lang::Php {
            if self.chars.get(j) != Some(&'<') {
                return Ok(false);
            }
            j += 1;
        }
        if matches!(self.chars.get(j), Some('~' | '-')) {
            j += 1;
        }
        let quote = match self.chars.get(j) {
            Some(q @ ('\'' | '"')) => {
                j += 1;
                Some(*q)
            }
            _ => None,
        };
        let start = j;
        while self
            .chars
            .get(j)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            j += 1;
        }
        if j == start || (quote.is_none() && !self.chars[start].is_uppercase()) {
            return Ok(false);
        }
        let tag: String = self.chars[start..j].iter().collect();
        if quote.is_some() {
            j += 1;
        }
        // The body starts on the next line (after any body opened earlier on this line).
        let rest_of_line = self.chars[j..].iter().position(|c| *c == '\n');
        let Some(nl) = rest_of_line else {
            return Err(": a here-document has no body".into());
        };
        self.heredocs += 1;
        if self.heredocs > MAX_HEREDOCS {
            return Err(": it holds too many here-documents".into());
        }
        let mut body_start = j + nl + 1;
        if let Some(&(start, end)) = self.bodies.last()
            && start <= body_start
            && end > body_start
        {
            body_start = end;
        }
        let mut line_start = body_start;
        while line_start <= self.chars.len() {
            let line_end = self.chars[line_start..]
                .iter()
                .position(|c| *c == '\n')
                .map_or(self.chars.len(), |p| line_start + p);
            let line: String = self.chars[line_start..line_end].iter().collect();
            if line.trim() == tag || line.trim().trim_end_matches(';') == tag {
                let text: String = self.chars[body_start..line_start].iter().collect();
                let dynamic = quote != Some('\'') && (text.contains('$') || text.contains("#{"));
                self.bodies
                    .push((body_start, (line_end + 1).min(self.chars.len())));
                self.i = j;
                self.toks.push(Tok::Str { text, dynamic });
                return Ok(true);
            }
            if line_end >= self.chars.len() {
                break;
            }
            line_start = line_end + 1;
        }
        Err(format!(": the here-document {tag} is never ended"))
    }
}
