//! What PHP functions do. PHP's library is large, so it is read by an allow-list: the functions
//! below that only compute or print are harmless, those that read, write, delete, run commands,
//! reach the network or evaluate code have their effect, and any other function (or class, or
//! static method) is not known to be harmless. Functions the code defines itself are allowed.

use super::script::{Tok, effects as script_effects};
use super::script_tables::{
    after, args, before, command, copy, delete_all, groups, rename, run, static_str, write_all,
};
use super::{Effect, Lang, Why};

/// Functions that only compute, print or inspect.
#[rustfmt::skip]
const HARMLESS: &[&str] = &[
    "echo", "print", "printf", "sprintf", "vsprintf", "print_r", "var_dump", "var_export",
    "json_encode", "json_decode", "json_last_error", "json_last_error_msg", "serialize",
    "number_format", "strlen", "strtolower", "strtoupper", "ucfirst", "lcfirst", "ucwords",
    "trim", "ltrim", "rtrim", "substr", "substr_count", "substr_replace", "strpos", "stripos",
    "strrpos", "strstr", "stristr", "strrchr", "str_replace", "str_ireplace", "str_pad",
    "str_repeat", "str_split", "str_contains", "str_starts_with", "str_ends_with", "str_word_count",
    "strrev", "strcmp", "strcasecmp", "strncmp", "strnatcmp", "wordwrap", "chunk_split",
    "explode", "implode", "join", "count", "sizeof", "sort", "rsort", "usort", "uasort", "uksort",
    "ksort", "krsort", "asort", "arsort", "natsort", "shuffle", "in_array", "range", "min", "max",
    "abs", "floor", "ceil", "round", "intval", "floatval", "boolval", "strval", "intdiv", "fmod",
    "pow", "sqrt", "exp", "log", "log10", "pi", "sin", "cos", "tan", "rand", "mt_rand",
    "random_int", "random_bytes", "md5", "sha1", "crc32", "hash", "hash_hmac", "hash_algos",
    "base64_encode", "base64_decode", "bin2hex", "hex2bin", "dechex", "hexdec", "decbin",
    "bindec", "octdec", "decoct", "base_convert", "htmlspecialchars", "htmlspecialchars_decode",
    "html_entity_decode", "htmlentities", "strip_tags", "nl2br", "addslashes", "stripslashes",
    "quotemeta", "urlencode", "urldecode", "rawurlencode", "rawurldecode", "http_build_query",
    "parse_url", "parse_str", "preg_match", "preg_match_all", "preg_replace", "preg_split",
    "preg_quote", "preg_grep", "date", "gmdate", "time", "mktime", "gmmktime", "strtotime",
    "microtime", "hrtime", "date_default_timezone_set", "date_default_timezone_get", "checkdate",
    "uniqid", "phpversion", "php_uname", "php_sapi_name", "zend_version", "ini_get",
    "memory_get_usage", "memory_get_peak_usage", "gettype", "get_debug_type", "settype",
    "is_array", "is_string", "is_int", "is_integer", "is_float", "is_numeric", "is_bool",
    "is_null", "is_object", "is_callable", "is_iterable", "is_countable", "is_scalar", "isset",
    "empty", "unset", "defined", "define", "function_exists", "class_exists", "method_exists",
    "property_exists", "extension_loaded", "get_loaded_extensions", "array", "list", "compact",
    "extract", "iconv", "utf8_encode", "utf8_decode", "file_exists", "is_file", "is_dir",
    "is_link", "is_readable", "is_writable", "is_writeable", "is_executable", "filesize",
    "filemtime", "fileperms", "realpath", "basename", "dirname", "pathinfo", "glob", "scandir",
    "getcwd", "sys_get_temp_dir", "exit", "die", "fgets", "fgetc", "fread", "fclose", "feof",
    "fwrite", "fputs", "fflush", "stream_get_contents", "fgetcsv", "fputcsv", "str_getcsv",
    "array_key_exists", "key_exists", "current", "key", "next", "reset", "end", "prev", "each",
    "array_sum", "array_product", "usleep", "sleep", "error_reporting", "ini_set", "set_error_handler",
    "version_compare", "levenshtein", "similar_text", "soundex", "metaphone", "ctype_digit",
    "ctype_alpha", "ctype_alnum", "ctype_upper", "ctype_lower", "ctype_space", "ctype_punct",
    "ctype_xdigit", "iterator_to_array", "spl_object_id", "spl_object_hash", "array_is_list",
    "fn", "function", "return", "if", "else", "elseif", "foreach", "for", "while", "switch",
    "match", "isset", "new", "clone", "static", "self", "parent", "true", "false", "null",
    "as", "use", "namespace", "class", "interface", "trait", "public", "private", "protected",
    "const", "var", "global", "instanceof", "and", "or", "xor", "not", "do", "try", "catch",
    "finally", "throw", "yield", "break", "continue", "default", "case", "abstract", "final",
    "readonly", "enum", "declare", "insteadof", "callable", "iterable", "object", "mixed",
    "void", "never", "int", "float", "bool", "string", "PHP_EOL", "PHP_VERSION", "PHP_INT_MAX",
    "STDIN", "STDOUT", "STDERR", "E_ALL", "JSON_PRETTY_PRINT", "JSON_UNESCAPED_SLASHES",
    "JSON_UNESCAPED_UNICODE", "JSON_THROW_ON_ERROR", "SORT_STRING", "COUNT_RECURSIVE",
];
/// Classes that only compute.
const HARMLESS_CLASSES: &[&str] = &[
    "DateTime",
    "DateTimeImmutable",
    "DateInterval",
    "DateTimeZone",
    "DatePeriod",
    "ArrayObject",
    "ArrayIterator",
    "SplStack",
    "SplQueue",
    "SplObjectStorage",
    "SplFixedArray",
    "stdClass",
    "Exception",
    "RuntimeException",
    "InvalidArgumentException",
    "LogicException",
    "Error",
    "TypeError",
    "ValueError",
    "JsonException",
    "Closure",
    "Generator",
    "WeakMap",
];

pub(in crate::inline) fn judge_php(toks: &[Tok], out: &mut Vec<Effect>) {
    // Functions the code defines itself.
    let own: Vec<&str> = toks
        .windows(2)
        .filter_map(|w| match w {
            [Tok::Ident(f), Tok::Ident(name)] if f == "function" => Some(name.as_str()),
            _ => None,
        })
        .collect();
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Ident(w) if after(toks, i, "->") || after(toks, i, "?->") => {}
            Tok::Ident(w) if after(toks, i, "function") || own.contains(&w.as_str()) => {}
            Tok::Ident(w) if i > 0 && matches!(&toks[i - 1], Tok::Ident(n) if n == "new") => {
                class(w, "new ", "", out)
            }
            Tok::Ident(w) if before(toks, i, "::") => class(w, "", "::", out),
            Tok::Ident(w) if after(toks, i, "::") => {}
            Tok::Ident(w)
                if before(toks, i, "(")
                    || matches!(
                        w.as_str(),
                        "include" | "require" | "include_once" | "require_once" | "eval"
                    ) =>
            {
                function(toks, i, w, out);
            }
            Tok::Var(v) if v == "$_ENV" || v == "$_SERVER" => {
                match (toks.get(i + 1), toks.get(i + 2)) {
                    (
                        Some(Tok::Punct(o)),
                        Some(Tok::Str {
                            text,
                            dynamic: false,
                        }),
                    ) if o == "[" => out.push(Effect::SecretVariable(text.clone())),
                    _ => out.push(Effect::AllVariables),
                }
            }
            Tok::Var(v) if v == "$GLOBALS" => {
                out.push(Effect::Unreadable(Why::Reflection, v.clone()))
            }
            Tok::Var(v) if before(toks, i, "(") => {
                out.push(Effect::Unreadable(Why::Reflection, format!("{v}(…)")))
            }
            Tok::Command { text, dynamic } => command(text, *dynamic, out),
            _ => {}
        }
    }
}

/// A class used by `new` or `::`: harmless ones only compute.
fn class(w: &str, before: &str, after: &str, out: &mut Vec<Effect>) {
    let own = matches!(w, "self" | "static" | "parent");
    if !own && !HARMLESS_CLASSES.contains(&w) {
        out.push(Effect::Unknown(format!("{before}{w}{after}")));
    }
}

fn function(toks: &[Tok], i: usize, w: &str, out: &mut Vec<Effect>) {
    let a = args(toks, i);
    let lower = w.to_ascii_lowercase();
    if file_function(&lower, w, a, out) {
        return;
    }
    let first = || groups(a).first().and_then(|g| static_str(g));
    match lower.as_str() {
        "system" | "exec" | "shell_exec" | "passthru" | "popen" | "proc_open" | "pcntl_exec" => {
            // The command is the first argument; the rest are options or handles.
            match first() {
                Some(line) => out.push(Effect::Shell(Some(line))),
                None => run(&[], out),
            }
        }
        "getenv" => out.push(match first() {
            Some(n) => Effect::SecretVariable(n),
            None => Effect::AllVariables,
        }),
        "eval" | "assert" => match first() {
            Some(code) => out.extend(script_effects(Lang::Php, &code)),
            None => out.push(Effect::Unreadable(Why::DynamicCode, w.to_string())),
        },
        "create_function" => out.push(Effect::Unreadable(Why::DynamicCode, w.to_string())),
        "include" | "require" | "include_once" | "require_once" => {
            out.push(Effect::Unreadable(Why::NotRead, w.to_string()))
        }
        "unserialize" => out.push(Effect::Unreadable(Why::Deserializes, w.to_string())),
        "call_user_func" | "call_user_func_array" | "forward_static_call" => {
            let closure = groups(a).first().is_some_and(
                |g| matches!(g.first(), Some(Tok::Ident(f)) if f == "function" || f == "fn"),
            );
            if !closure {
                out.push(Effect::Unreadable(Why::Reflection, w.to_string()));
            }
        }
        "array_map" | "array_filter" | "array_walk" | "array_reduce" | "usort" | "uasort"
        | "uksort" => {
            // A callback named by a string or a variable is a call by a computed name.
            let at = if lower == "array_map" { 0 } else { 1 };
            let callback = groups(a).get(at).copied();
            if callback
                .is_some_and(|g| g.len() == 1 && matches!(g[0], Tok::Str { .. } | Tok::Var(_)))
            {
                out.push(Effect::Unreadable(Why::Reflection, w.to_string()));
            }
        }
        "dl" | "ffi" => out.push(Effect::Unreadable(Why::Native, w.to_string())),
        n if n.starts_with("curl_")
            || n.starts_with("socket_")
            || n.starts_with("ftp_")
            || n.starts_with("stream_socket")
            || matches!(
                n,
                "fsockopen"
                    | "pfsockopen"
                    | "mail"
                    | "get_headers"
                    | "dns_get_record"
                    | "gethostbyname"
                    | "http_get"
            ) =>
        {
            out.push(Effect::Network(w.to_string()))
        }
        n if n.starts_with("array_")
            || n.starts_with("mb_")
            || n.starts_with("str")
            || n.starts_with("ctype_") => {}
        n if HARMLESS.iter().any(|h| h.eq_ignore_ascii_case(n)) => {}
        _ => out.push(Effect::Unknown(w.to_string())),
    }
}

/// The functions that read, write or delete files: true when `lower` (the name in lower case)
/// is one.
fn file_function(lower: &str, w: &str, a: &[Tok], out: &mut Vec<Effect>) -> bool {
    let gs = groups(a);
    let path = gs.first().and_then(|g| static_str(g));
    match lower {
        "file_get_contents" | "file" | "readfile" | "fopen" | "parse_ini_file"
        | "highlight_file" | "show_source" => {
            if path.as_deref().is_some_and(|p| p.contains("://")) {
                out.push(Effect::Network(w.to_string()));
                return true;
            }
            let mode = gs.get(1).and_then(|g| static_str(g));
            let writes = lower == "fopen"
                && mode
                    .as_deref()
                    .is_none_or(|m| m.contains(['w', 'a', 'x', 'c', '+']));
            match (writes, path) {
                (true, p) => out.push(Effect::Write(p)),
                (false, Some(p)) => out.push(Effect::Read(p)),
                // A URL known only when it runs is the network.
                (false, None) if matches!(lower, "file_get_contents" | "fopen") => {
                    out.push(Effect::Network(format!("{w}(…)")))
                }
                (false, None) => {}
            }
        }
        "file_put_contents" | "touch" | "mkdir" => out.push(Effect::Write(path)),
        "chmod" | "chown" | "chgrp" | "lchown" | "lchgrp" | "tempnam" => write_all(a, out),
        "unlink" | "rmdir" => delete_all(a, out),
        "rename" => rename(a, out),
        "copy" | "symlink" | "link" => copy(a, out),
        _ => return false,
    }
    true
}
