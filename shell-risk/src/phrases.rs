//! The catalogue of every phrase a reason is made of: each declared once, with a stable key and
//! its English template. A template's `{placeholders}` are filled with command words and paths
//! (never translated) or with another phrase (the "how" of a deletion, the place it reaches), so
//! a reworded catalogue rewords composed reasons whole. A [`crate::Message`] fills them in, with
//! the words of a [`crate::Wording`].

/// One phrase: its stable key (what a config names it by) and its English template.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Phrase {
    pub key: &'static str,
    pub english: &'static str,
}

/// Declares each phrase as a `static` and lists them all in [`ALL`]. The key is spelled out
/// beside the name because `macro_rules!` cannot lowercase an identifier; a test checks they
/// agree.
macro_rules! phrases {
    ($($name:ident / $key:ident = $english:literal;)*) => {
        $(pub static $name: Phrase = Phrase { key: stringify!($key), english: $english };)*
        /// Every phrase, in declaration order.
        pub static ALL: &[&Phrase] = &[$(&$name),*];
        /// The constants' names, beside [`ALL`]: to check each key is its name in lower case.
        #[cfg(test)]
        pub(crate) static NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

phrases! {
    // The four levels, as prompts show them, and what a command with no reason at its level
    // does.
    LEVEL_SAFE / level_safe = "safe";
    LEVEL_MODERATE / level_moderate = "moderate";
    LEVEL_HIGH / level_high = "high";
    LEVEL_CRITICAL / level_critical = "critical";
    ONLY_READS / only_reads = "only reads";

    // The command as a whole (walk.rs).
    TOO_LONG / too_long = "is longer than {limit} bytes: too long to assess";
    UNPARSABLE / unparsable = "could not be parsed as a shell command";
    INVALID_SYNTAX / invalid_syntax =
        "is not a complete, valid shell command{position}: it cannot be assessed";
    INVALID_SYNTAX_POSITION / invalid_syntax_position = " (at line {line}, column {column})";
    NESTS_TOO_DEEPLY / nests_too_deeply = "nests too deeply to assess";
    NESTS_COMMANDS_TOO_DEEPLY / nests_commands_too_deeply = "nests commands too deeply to assess";
    CHANGES_SHELL_VARIABLES / changes_shell_variables = "changes shell variables";
    PIPES_DOWNLOAD_INTO_INTERPRETER / pipes_download_into_interpreter =
        "pipes a download straight into an interpreter: runs code nobody has read";
    RUNS_CODE_FROM_PIPE / runs_code_from_pipe = "runs code it reads from a pipe";
    SETS_VARIABLE_FOR_LATER_PROGRAMS / sets_variable_for_later_programs =
        "sets {variable}, which changes what every later program loads or runs";
    FORK_BOMB / fork_bomb = "defines a function that starts copies of itself: a fork bomb";
    RECURSIVE_FUNCTION / recursive_function = "defines a function that calls itself";
    WRITE_UNKNOWN_FOLDER / write_unknown_folder =
        "writes a file while the working folder is unknown: counted as outside it";

    // Which program runs (rules.rs).
    RUNS_DOWNLOADED_PROGRAM_NAME / runs_downloaded_program_name =
        "runs a program named by a download";
    RUNS_DYNAMIC_COMMAND_NAME / runs_dynamic_command_name =
        "runs a command whose name is known only when it runs";
    RUNS_PROGRAM_FROM_FOLDER / runs_program_from_folder = "runs the program {program} from a folder";
    REMOVES_EMPTY_FOLDERS / removes_empty_folders = "removes empty folders";
    CHANGES_SHELL_FOLDER / changes_shell_folder = "changes the shell's folder";
    EVALUATES_DOWNLOADED_CODE / evaluates_downloaded_code = "evaluates downloaded code";
    EVALUATES_DYNAMIC_CODE / evaluates_dynamic_code = "evaluates shell code known only when it runs";
    SOURCES_DOWNLOADED_SCRIPT / sources_downloaded_script = "runs a downloaded script in the shell";
    SOURCES_SCRIPT / sources_script = "runs the script {script} in the shell";
    SOURCE_WITHOUT_FILE / source_without_file = "source without a file";

    // Deleting (rules.rs): `{how}` is one of the `deletes…` phrases, `{what}` a place.
    DELETES / deletes = "deletes";
    DELETES_RECURSIVELY / deletes_recursively = "deletes recursively";
    DELETES_WITHOUT_ASKING / deletes_without_asking = "deletes without asking";
    DELETES_RECURSIVELY_WITHOUT_ASKING / deletes_recursively_without_asking =
        "deletes recursively and without asking";
    SHREDS / shreds = "overwrites and deletes beyond recovery";
    DELETES_NOTHING_NAMED / deletes_nothing_named = "deletes nothing it names";
    DELETES_DYNAMIC_PATHS / deletes_dynamic_paths = "{how} paths known only when it runs ({paths})";
    DELETES_AFTER_DYNAMIC_CD / deletes_after_dynamic_cd =
        "{how} {path} after changing to a folder known only when it runs";
    DELETES_DISK_DEVICE / deletes_disk_device = "{how} the disk device {path}";
    EVERYTHING_IN / everything_in = "everything in {place}";
    DELETES_INSIDE_WORKING_FOLDER / deletes_inside_working_folder =
        "{how} inside the working folder ({path})";
    DELETES_EVERYTHING_OUTSIDE / deletes_everything_outside =
        "{how} everything in {path}, outside the working folder";
    DELETES_OUTSIDE / deletes_outside = "{how} outside the working folder ({path})";
    DELETES_PLACE_OUTSIDE / deletes_place_outside =
        "{how} {what}, outside the working folder ({path})";
    DELETES_PLACE / deletes_place = "{how} {what} ({path})";

    // Places a path can be in (paths.rs).
    PLACE_ROOT / place_root = "the root folder /";
    PLACE_HOME / place_home = "the home folder";
    PLACE_SYSTEM / place_system = "a system folder";
    PLACE_WORKING_FOLDER / place_working_folder = "the working folder itself";
    PLACE_INSIDE / place_inside = "the working folder";
    PLACE_STARTUP / place_startup = "a shell start-up or login file";
    PLACE_DOTFILE / place_dotfile = "a dotfile or configuration folder";
    PLACE_OUTSIDE / place_outside = "a place outside the working folder";

    // Raw copies, permissions, owners, moves, signals (rules.rs).
    COPIES_RAW_DATA / copies_raw_data = "copies raw data";
    WRITES_RAW_DATA_DYNAMIC / writes_raw_data_dynamic =
        "writes raw data to a file known only when it runs";
    SETS_SETUID / sets_setuid = "sets the set-user-ID or set-group-ID bit";
    CHANGES_PERMISSIONS_OF / changes_permissions_of = "changes permissions of";
    CHANGES_OWNER_OF / changes_owner_of = "changes the owner of";
    CHANGES_DYNAMIC_PATHS / changes_dynamic_paths = "{verb} paths known only when it runs";
    CHANGES_PLACE / changes_place = "{verb} {place} ({path})";
    CHANGES_PLACE_RECURSIVELY / changes_place_recursively = "{verb} {place} ({path}), recursively";
    CHANGES_FILES / changes_files = "{verb} files";
    WRITES_FILES / writes_files = "writes files ({program})";
    MOVES_AWAY / moves_away = "moves away {place} ({path})";
    COPIES_INPUT / copies_input = "copies its input to its output";
    LISTS_SIGNALS / lists_signals = "lists signal names";
    SIGNALS_EVERY_REACHABLE_PROCESS / signals_every_reachable_process =
        "signals every process the user can reach (pid -1)";
    SIGNALS_INIT / signals_init = "signals init or every process (pid 1 / -1)";
    SIGNALS_DYNAMIC_PROCESSES / signals_dynamic_processes =
        "signals processes chosen only when it runs";
    SENDS_SIGNAL / sends_signal = "sends a signal to processes";

    // Writing one file (rules.rs): `{verb}` is `appends to` or `overwrites`.
    APPENDS_TO / appends_to = "appends to";
    OVERWRITES / overwrites = "overwrites";
    WRITES_DYNAMIC_FILE / writes_dynamic_file = "writes to a file named only when it runs ({file})";
    WRITES_IN_DYNAMIC_FOLDER / writes_in_dynamic_folder =
        "writes {file} in a folder known only when it runs";
    WRITES_DISK_DEVICE / writes_disk_device = "writes to the disk device {path}";
    WRITES_SYSTEM_FOLDER / writes_system_folder = "writes into a system folder ({path})";
    WRITES_STARTUP_FILE / writes_startup_file = "{verb} a shell start-up or login file ({path})";
    WRITES_DOTFILE_OUTSIDE / writes_dotfile_outside =
        "{verb} a dotfile or configuration file outside the working folder ({path})";
    WRITES_OUTSIDE / writes_outside = "writes a file outside the working folder ({path})";
    WRITES_IN_WORKING_FOLDER / writes_in_working_folder =
        "writes a file in the working folder ({path})";
    WRITES_A_FILE / writes_a_file = "writes a file";
    NAMES_NO_FILE / names_no_file = "names no file";
    WRITES_RELATIVE_TO_NOTHING / writes_relative_to_nothing =
        "writes {path}, relative to no known folder";
    WRITES_DOTFILE / writes_dotfile = "writes a dotfile or configuration file ({path})";

    // Wrappers and interpreters (commands.rs): `{command}` is how the code was handed over.
    RUNS_AS_ROOT / runs_as_root = "runs as root ({program})";
    LOOKS_UP_COMMAND / looks_up_command = "looks up a command";
    PRINTS_ENVIRONMENT / prints_environment = "prints the environment";
    OPENS_ROOT_SHELL / opens_root_shell = "opens a root shell";
    RUNS_NOTHING / runs_nothing = "runs nothing";
    PRINTS_INPUT / prints_input = "prints its input (xargs echo)";
    SETS_VARIABLE_FOR_PROGRAM / sets_variable_for_program =
        "sets {variable}, which changes what the program loads or runs";
    RUNS_DOWNLOADED_SCRIPT / runs_downloaded_script = "runs a downloaded script ({command})";
    RUNS_DYNAMIC_SHELL_CODE / runs_dynamic_shell_code =
        "runs shell code known only when it runs ({command} {code})";
    NOTHING_TO_RUN / nothing_to_run = "{command} with nothing to run";
    PRINTS_ITS_VERSION / prints_its_version = "prints its version";
    RUNS_INLINE_CODE / runs_inline_code = "runs inline {program} code";
    RUNS_MODULE / runs_module = "runs a {program} module";
    RUNS_SCRIPT / runs_script = "runs the script {script}";
    RUNS_DYNAMIC_SCRIPT / runs_dynamic_script = "runs a script named only when it runs ({program})";
    RUNS_HERE_DOCUMENT / runs_here_document = "runs {program} code from a here-document";
    RUNS_DYNAMIC_CODE / runs_dynamic_code = "runs {program} code assembled only when it runs";
    RUNS_SCRIPT_FROM_FILE / runs_script_from_file = "runs a script from a file ({program})";
    READS_CODE_FROM_INPUT / reads_code_from_input = "starts {program}, reading code from its input";
    RUNS_AWK_FILE / runs_awk_file = "runs an awk program from a file";
    RUNS_AWK_THAT_WRITES / runs_awk_that_writes =
        "runs an awk program that may run commands or write files";
    READS_TEXT_WITH_AWK / reads_text_with_awk = "reads text with awk";
    RUNS_DYNAMIC_AWK / runs_dynamic_awk = "runs an awk program known only when it runs";
    RUNS_AWK_WITHOUT_PROGRAM / runs_awk_without_program = "runs awk without a program";

    // Read-only commands (readonly.rs, and `only reads` throughout).
    ONLY_READS_COMMAND / only_reads_command = "only reads ({command})";
    RUNS_EMPTY_EXEC / runs_empty_exec = "runs an empty -exec";
    WRITING_OPTIONS / writing_options = "{program} with options that write or change things";

    // git (git.rs): `{command}` is `git` and its subcommand.
    SETS_GIT_COMMAND_CONFIG / sets_git_command_config = "sets git configuration that runs a command";
    OVERRIDES_GIT_CONFIG / overrides_git_config = "overrides git configuration";
    RUNS_DYNAMIC_GIT / runs_dynamic_git = "runs git with a subcommand known only when it runs";
    WRITES_GIT_OUTPUT / writes_git_output = "writes git output to a file or runs an external diff";
    THROWS_AWAY_CHANGES / throws_away_changes = "throws away uncommitted changes ({command})";
    LISTS_WHAT_CLEAN_DELETES / lists_what_clean_deletes =
        "only lists what it would delete ({command})";
    DELETES_UNTRACKED / deletes_untracked = "deletes untracked files beyond recovery ({command})";
    DISCARDS_CHANGES / discards_changes = "discards uncommitted changes ({command})";
    REWRITES_HISTORY / rewrites_history = "rewrites the repository's history";
    DESTROYS_UNREACHABLE / destroys_unreachable = "destroys unreachable commits ({command})";
    DELETES_REFERENCE / deletes_reference = "deletes a reference";
    CHANGES_REPOSITORY_OR_REMOTE / changes_repository_or_remote =
        "changes the repository or talks to a remote ({command})";
    DELETES_UNMERGED_BRANCH / deletes_unmerged_branch = "deletes a branch even if it is not merged";
    CHANGES_BRANCHES / changes_branches = "changes branches";
    THROWS_AWAY_STASH / throws_away_stash = "throws away stashed changes";
    DESTROYS_REFLOG / destroys_reflog = "destroys the record of past commits";
    RUNS_IN_SUBMODULES / runs_in_submodules = "runs a command in every submodule";
    CHANGES_TAGS / changes_tags = "changes tags";
    CHANGES_REPOSITORY / changes_repository = "changes the repository ({command})";
    CHANGES_GIT_CONFIG / changes_git_config = "changes git configuration";
    FORCE_PUSHES / force_pushes = "force-pushes or deletes on the remote: rewrites shared history";
    PUBLISHES_COMMITS / publishes_commits = "publishes commits to a remote";

    // Commands by name (system.rs).
    TRUNCATES_FILES / truncates_files = "truncates files";
    COPIES_FILES_RSYNC / copies_files_rsync = "copies files (rsync)";
    DELETES_NOT_IN_SOURCE / deletes_not_in_source = "deletes what is not in the source: {write}";
    CONNECTS_SHELL_TO_NETWORK / connects_shell_to_network = "connects a shell to the network";
    PRINTS_VERSION_OR_HELP / prints_version_or_help = "prints {program}'s version or help";
    NOT_ON_READ_ONLY_LIST / not_on_read_only_list =
        "runs {program}, which is not on the read-only list";
    DOWNLOADS / downloads = "downloads or uploads over the network ({program})";
    MAKES_FILE_SYSTEM / makes_file_system = "makes a file system: formats a disk or partition";
    WIPES_DISK / wipes_disk = "partitions, formats or wipes a disk";
    SHUTS_DOWN / shuts_down = "shuts down or restarts the machine";
    KILLS_BY_NAME / kills_by_name = "kills processes by name: every match, not one process";
    DISABLES_FIREWALL / disables_firewall = "disables the firewall";
    CHANGES_FIREWALL / changes_firewall = "changes firewall rules";
    TURNS_OFF_ACCESS_CONTROL / turns_off_access_control = "turns off mandatory access control";
    CHANGES_ACCOUNTS / changes_accounts = "changes user accounts or who may use root";
    CHANGES_KERNEL / changes_kernel = "changes the running kernel";
    MOUNTS_OR_UNMOUNTS / mounts_or_unmounts = "mounts or unmounts file systems or swap";
    MOUNTS / mounts = "mounts a file system";
    REMOVES_CRON_JOBS / removes_cron_jobs = "removes every scheduled job of the user";
    OPENS_FIREWALL / opens_firewall = "flushes or opens the firewall";

    // Services, network, packages, containers (tools.rs).
    STOPS_GUARD_SERVICE / stops_guard_service =
        "stops or disables the firewall or a security service";
    STOPS_SERVICE / stops_service = "stops or disables a service ({action})";
    SWITCHES_SYSTEM / switches_system = "shuts down, suspends or switches the whole system";
    CHANGES_SERVICES / changes_services = "changes services ({command})";
    CHANGES_NETWORK / changes_network = "changes network interfaces or routes";
    PRINTS_PROGRAM_VERSION / prints_program_version = "prints {program}'s version";
    CONTAINER_GETS_MACHINE / container_gets_machine =
        "gives a container the whole machine (privileged, host root or the docker socket)";
    DELETES_CONTAINERS / deletes_containers = "deletes containers, images or volumes";
    REMOVES_PACKAGES / removes_packages = "removes packages or resources ({command})";
    INSTALLS_OR_BUILDS / installs_or_builds =
        "runs {command}, which installs, builds or changes things";
    REMOVES_SYSTEM_PACKAGES / removes_system_packages = "removes system packages";
    INSTALLS_SYSTEM_PACKAGES / installs_system_packages = "installs or upgrades system packages";
    INSTALLS_PACKAGES / installs_packages = "installs packages ({program})";

    // Secrets (exposure.rs): `{path}` is the file or folder, `{pattern}` the entry of the secret
    // list it matches.
    READS_SECRET / reads_secret = "reads the secret {path}";
    COPIES_SECRET / copies_secret = "copies the secret {path} ({program})";
    SENDS_SECRET / sends_secret = "sends the secret {path} to another machine ({program})";
    MAY_READ_SECRET / may_read_secret = "may read a secret: {path} can match {pattern}";
    READS_FOLDER_WITH_SECRETS / reads_folder_with_secrets =
        "reads all of {path}, which holds secrets ({pattern})";
    SENDS_FOLDER_WITH_SECRETS / sends_folder_with_secrets =
        "sends all of {path}, which holds secrets ({pattern}), to another machine ({program})";
    SERVES_FOLDER_WITH_SECRETS / serves_folder_with_secrets =
        "serves {path}, which holds secrets ({pattern}), over the network";
    SERVES_UNKNOWN_FOLDER / serves_unknown_folder =
        "serves a folder known only when it runs over the network";
    PRINTS_SECRET_VARIABLE / prints_secret_variable = "prints the secret variable {variable}";
    PRINTS_ALL_VARIABLES / prints_all_variables = "prints every variable, secrets included";
    PRINTS_PROCESS_ENVIRONMENTS / prints_process_environments =
        "prints processes' environments, secrets included";
    EXPORTS_SECRET_KEYS / exports_secret_keys = "exports secret keys ({program} {option})";
    PRINTS_STORED_SECRET / prints_stored_secret = "prints a stored secret or token ({command})";

    // An agent's own read and delete tools (reads.rs).
    READS_INSIDE / reads_inside = "reads {path}, inside the working folder";
    READS_OUTSIDE / reads_outside = "reads {path}, outside the working folder";
    READS_UNKNOWN_FOLDER / reads_unknown_folder =
        "reads {path} while the working folder is unknown: counted as outside it";
    DELETE_UNKNOWN_FOLDER / delete_unknown_folder =
        "deletes a file while the working folder is unknown: counted as outside it";

    // Persistence (persist.rs, paths.rs): what runs later on its own.
    CHANGES_CRON_JOBS / changes_cron_jobs =
        "changes the user's scheduled jobs (crontab): they run later, unattended";
    SCHEDULES_COMMAND / schedules_command =
        "schedules a command to run later, unattended ({program})";
    MAKES_SERVICE_PERSIST / makes_service_persist =
        "makes a service start on its own ({command})";
    ENABLES_LINGER / enables_linger =
        "lets the user's services run without a login (loginctl enable-linger)";
    WRITES_PERSISTENCE / writes_persistence =
        "{verb} a file that runs later on its own or in place of a command ({path})";
    PLACE_PERSISTENCE / place_persistence =
        "a place whose programs run later on their own or in place of a command";

    // Multi-call binaries, archives, truncation (commands.rs, system.rs).
    RUNS_APPLET / runs_applet = "runs the {program} applet {applet}";
    LISTS_APPLETS / lists_applets = "lists its applets ({program})";
    EMPTIES / empties = "empties";
    ARCHIVES_AND_DELETES / archives_and_deletes =
        "deletes what it archives (tar --remove-files)";

    // Inline code (inline/): `{language}` is Python, JavaScript, Perl, Ruby or PHP; `{why}` one
    // of the `why_…` phrases.
    CODE_DELETES_DYNAMIC / code_deletes_dynamic =
        "runs {language} code that deletes files named only when it runs";
    CODE_WRITES_DYNAMIC / code_writes_dynamic =
        "runs {language} code that writes files named only when it runs";
    CODE_STARTS_PROCESS / code_starts_process = "runs {language} code that starts a process";
    CODE_RUNS_DYNAMIC_COMMAND / code_runs_dynamic_command =
        "runs {language} code that starts a command known only when it runs";
    CODE_USES_NETWORK / code_uses_network =
        "runs {language} code that uses the network ({what})";
    CODE_CALLS_UNKNOWN / code_calls_unknown =
        "runs {language} code that calls {name}, which is not known to be harmless";
    CODE_READS_SECRET_VARIABLE / code_reads_secret_variable =
        "runs code that reads the secret variable {variable}";
    CODE_READS_ALL_VARIABLES / code_reads_all_variables =
        "runs code that reads every environment variable, secrets included";
    CODE_UNREADABLE / code_unreadable = "runs {language} code the gate cannot read: {why}";
    WHY_UNPARSABLE / why_unparsable = "it does not parse{name}";
    WHY_DYNAMIC_CODE / why_dynamic_code = "it evaluates code known only when it runs ({name})";
    WHY_DYNAMIC_IMPORT / why_dynamic_import =
        "it loads a module named only when it runs ({name})";
    WHY_REFLECTION / why_reflection =
        "it reaches functions by computed names or through the interpreter's internals ({name})";
    WHY_NATIVE / why_native = "it calls native code ({name})";
    WHY_DESERIALIZES / why_deserializes = "it loads objects that can run code ({name})";
    WHY_NESTS / why_nests = "it nests code too deeply{name}";
    WHY_NOT_READ / why_not_read = "it uses {name}, which the gate does not read";
    WHY_PASSES_FUNCTION / why_passes_function = "it hands {name} on instead of calling it";
    RUNS_CODE_FROM_DYNAMIC_TEXT / runs_code_from_dynamic_text =
        "runs {program} code known only when it runs";

    // Codex patches (patch.rs).
    APPLIES_PATCH / applies_patch = "applies a patch to {files} file(s)";
    PATCH_UNKNOWN / patch_unknown = "applies a patch known only when it runs";
    PATCH_CHANGES_NOTHING / patch_changes_nothing = "applies a patch that names no file";
    PATCH_UNPARSABLE / patch_unparsable =
        "applies a patch that cannot be read (at line {line} of the patch)";

    // sed (sed.rs).
    SED_IN_PLACE / sed_in_place = "edits files in place (sed -i)";
    SED_SCRIPT_FILE / sed_script_file = "runs a sed script from a file";
    SED_MAY_WRITE / sed_may_write = "runs a sed script that may write files or run commands";
}
