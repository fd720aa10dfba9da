#!/bin/bash
# End to end: the MCP gateway (`pcpctl mcp`) in front of real MCP servers from npm
# (@modelcontextprotocol/server-filesystem and server-everything), put in the real agent CLIs'
# MCP settings (Claude Code, Codex CLI, Gemini CLI), each offline against the scripted model
# server on loopback, with the headless compositor (pcp-harness) playing the user:
#   read       the model reads a file inside the allowed folder; a manifest declares
#              mcp.fs.read_text_file a routine read          -> no prompt, the CLI shows the text
#   write      the model overwrites a file outside the project through write_file; the user
#              denies                                         -> a prompt, the file is unchanged,
#                                                                the CLI shows the denial
#   nodesktop  no compositor at all; the model calls server-everything's echo
#                                                             -> the CLI shows the tool error
#   http       server-everything over streamable HTTP behind `pcpctl mcp --url`, the CLI
#              connected to the gateway's loopback endpoint; the model calls echo, which no
#              manifest declares, and the user denies          -> a prompt, the CLI shows the
#                                                                denial
#
# Usage: mcp_e2e.sh [claude|codex|gemini]...      (default: all three)
# Env: PCP_HARNESS, PCPCTL (binaries), AGENTS_BIN (folder with claude, codex, gemini),
#      MCP_SERVERS_BIN (folder with mcp-server-filesystem, mcp-server-everything),
#      KEEP=1 keeps the scratch folder. Prints one line per case and "N passed, M failed";
#      exits 1 if any failed or a CLI or server is missing.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
MODEL="$HERE/scripted_model_server.py"
: "${PCP_HARNESS:?path to the pcp-harness example binary}"
: "${PCPCTL:?path to pcpctl}"
: "${AGENTS_BIN:?folder holding claude, codex and gemini}"
: "${MCP_SERVERS_BIN:?folder holding mcp-server-filesystem and mcp-server-everything}"
FS_SERVER="$MCP_SERVERS_BIN/mcp-server-filesystem"
EVERYTHING_SERVER="$MCP_SERVERS_BIN/mcp-server-everything"

WHICH=("$@")
[ ${#WHICH[@]} -eq 0 ] && WHICH=(claude codex gemini)
BASE_PATH="$AGENTS_BIN:/usr/local/bin:/usr/bin:/bin"
WORK=$(mktemp -d /tmp/pcp-mcp-e2e.XXXXXX)
PASS=0
FAIL=0
MODEL_PID=""

cleanup() {
  if [ -n "$MODEL_PID" ]; then kill "$MODEL_PID" 2>/dev/null; wait "$MODEL_PID" 2>/dev/null; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# new_case NAME -> D with D/proj (the working folder, allowed), D/outside (allowed by the
# filesystem server, outside the project), D/home, the user (who denies every prompt), and a
# manifest folder declaring the filesystem server's read_text_file a routine read.
new_case() {
  D="$WORK/$1"
  mkdir -p "$D/home" "$D/proj" "$D/outside" "$D/tmp" "$D/manifests"
  echo "hello from the project" > "$D/proj/notes.txt"
  echo "precious" > "$D/outside/victim.txt"
  printf '[[answer]]\ncapability = "*"\ndo = "deny"\n' > "$D/user.toml"
  cat > "$D/manifests/fs.toml" <<'EOF'
[[capability]]
name = "mcp.fs.read_text_file"
version = 1
side_effects = "read"
auth_level = "user"
description = "Read a file through the filesystem server"
EOF
}

# start_model TOOL_REGEX ARGS_JSON
start_model() {
  python3 "$MODEL" --port-file "$D/port" --log "$D/requests.jsonl" --full-bodies \
    --tool "$1" --tool-args "$2" --idle 60 --lifetime 300 --max-requests 100 \
    > "$D/model.out" 2>&1 &
  MODEL_PID=$!
  for _ in $(seq 100); do [ -s "$D/port" ] && break; sleep 0.05; done
  PORT=$(cat "$D/port")
}

stop_model() {
  kill "$MODEL_PID" 2>/dev/null; wait "$MODEL_PID" 2>/dev/null; MODEL_PID=""
}

# The gateway's command line (as JSON strings) in front of server SERVER ARGS...
gateway_args() {  # NAME SERVER [ARGS...]
  local name=$1; shift
  printf '"mcp", "--name", "%s", "--"' "$name"
  for a in "$@"; do printf ', "%s"' "$a"; done
}

run_cli() {  # under_harness(yes|no)
  chmod +x "$D/cli.sh"
  if [ "$1" = yes ]; then
    timeout 180 "$PCP_HARNESS" --user "$D/user.toml" --manifests "$D/manifests" -- "$D/cli.sh" \
      > "$D/harness.jsonl" 2> "$D/harness.err"
  else
    : > "$D/harness.jsonl"
    WAYLAND_DISPLAY="$D/no-compositor" XDG_RUNTIME_DIR="$D/tmp" timeout 180 "$D/cli.sh" \
      2> "$D/harness.err"
  fi
}

# verdict NAME CHECKS... where each check is one of:
#   prompt:CAPABILITY     a prompt for it came up      noprompt   no prompt came up
#   allowed:CAPABILITY    a decision approved it        unchanged  D/outside/victim.txt intact
#   said:TEXT             the CLI's output or what it sent the model holds TEXT
verdict() {
  local name=$1 secs=$2 ok=1 why=""; shift 2
  local prompts
  prompts=$(grep -c '"event":"prompt"' "$D/harness.jsonl" 2>/dev/null); prompts=${prompts:-0}
  for check in "$@"; do
    case "$check" in
      prompt:*) grep '"event":"prompt"' "$D/harness.jsonl" | grep -q "\"capability\":\"${check#prompt:}\"" \
                  || { ok=0; why="$why no prompt for ${check#prompt:};"; } ;;
      noprompt) [ "$prompts" = 0 ] || { ok=0; why="$why $prompts prompt(s);"; } ;;
      allowed:*) grep '"event":"decision"' "$D/harness.jsonl" | grep "\"capability\":\"${check#allowed:}\"" \
                   | grep -q '"approved":true' || { ok=0; why="$why ${check#allowed:} not approved;"; } ;;
      unchanged) [ "$(cat "$D/outside/victim.txt")" = precious ] || { ok=0; why="$why victim changed;"; } ;;
      said:*) cat "$D"/out.* "$D/requests.jsonl" 2>/dev/null | grep -qF "${check#said:}" \
                || { ok=0; why="$why the CLI never showed '${check#said:}';"; } ;;
    esac
  done
  if [ $ok = 1 ]; then PASS=$((PASS + 1)); r=PASS; else FAIL=$((FAIL + 1)); r=FAIL; fi
  printf '%-4s %-18s prompts=%s %5.1fs%s\n' "$r" "$name" "$prompts" "$secs" "${why:+ |$why}"
  if [ $r = FAIL ]; then tail -n 5 "$D/harness.err" | sed 's/^/     | /'; fi
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# write_cli CLI: D/cli.sh runs CLI in D/proj with its MCP settings (written here) naming the
# servers in $SERVERS_JSON (a JSON object of name -> {command, args}) or $CODEX_SERVERS (TOML).
write_cli() {
  case "$1" in
    claude)
      printf '{"mcpServers": %s}\n' "$SERVERS_JSON" > "$D/mcp.json"
      cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=sk-ant-dummy \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
  CLAUDE_CODE_MAX_RETRIES=0 IS_SANDBOX=1 \
  claude -p "Do the task" --output-format json --mcp-config "$D/mcp.json" --strict-mcp-config \
    --permission-mode bypassPermissions < /dev/null > "$D/out.json"
EOF
      ;;
    codex)
      mkdir -p "$D/codex-home"
      cat > "$D/codex-home/config.toml" <<EOF
model = "scripted-model"
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:$PORT/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000
$CODEX_SERVERS
EOF
      cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  CODEX_HOME="$D/codex-home" SCRIPTED_API_KEY=dummy \
  codex exec --skip-git-repo-check --json --disable plugins --sandbox danger-full-access \
    "Do the task" < /dev/null > "$D/out.jsonl"
EOF
      ;;
    gemini)
      mkdir -p "$D/home/.gemini"
      printf '{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"mcpServers": %s}\n' \
        "$SERVERS_JSON" > "$D/home/.gemini/settings.json"
      cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" GEMINI_API_KEY=dummy \
  gemini -p "Do the task" --output-format json --skip-trust --yolo < /dev/null > "$D/out.json"
EOF
      ;;
  esac
}

# servers NAME SERVER [ARGS...]: the settings for one server behind the gateway.
servers() {
  local name=$1 args
  args=$(gateway_args "$@")
  SERVERS_JSON=$(printf '{"%s": {"command": "%s", "args": [%s], "timeout": 60000}}' \
    "$name" "$PCPCTL" "$args")
  CODEX_SERVERS=$(printf '\n[mcp_servers.%s]\ncommand = "%s"\nargs = [%s]\nenv_vars = ["WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"]\nstartup_timeout_sec = 60\ntool_timeout_sec = 60\n' \
    "$name" "$PCPCTL" "$args")
}

mcp_case() {  # CLI CASE
  local cli=$1 kase=$2 t0
  new_case "$cli-$kase"
  case "$kase" in
    read)
      servers fs "$FS_SERVER" "$D/proj" "$D/outside"
      start_model "fs_+read_text_file" "{\"path\": \"$D/proj/notes.txt\"}"
      write_cli "$cli"; t0=$(now); run_cli yes; stop_model
      verdict "$cli-$kase" "$(elapsed "$t0")" noprompt allowed:mcp.fs.read_text_file \
        "said:hello from the project" ;;
    write)
      servers fs "$FS_SERVER" "$D/proj" "$D/outside"
      start_model "fs_+write_file" "{\"path\": \"$D/outside/victim.txt\", \"content\": \"overwritten\"}"
      write_cli "$cli"; t0=$(now); run_cli yes; stop_model
      verdict "$cli-$kase" "$(elapsed "$t0")" prompt:mcp.fs.write_file unchanged \
        "said:pcp-confirm denied this tool call" ;;
    http)
      local port=$((20000 + RANDOM % 20000))
      # Claude Code: "type": "http"; Gemini CLI: "httpUrl" (its "url" is the older SSE transport).
      if [ "$cli" = gemini ]; then
        SERVERS_JSON=$(printf '{"ev": {"httpUrl": "http://127.0.0.1:%s/mcp", "timeout": 60000}}' "$((port + 1))")
      else
        SERVERS_JSON=$(printf '{"ev": {"type": "http", "url": "http://127.0.0.1:%s/mcp"}}' "$((port + 1))")
      fi
      CODEX_SERVERS=$(printf '\n[mcp_servers.ev]\nurl = "http://127.0.0.1:%s/mcp"\nstartup_timeout_sec = 60\ntool_timeout_sec = 60\n' "$((port + 1))")
      start_model "ev_+echo" '{"message": "hello"}'
      write_cli "$cli"
      # The server and the gateway run beside the CLI, the gateway under the harness's display.
      mv "$D/cli.sh" "$D/cli-inner.sh"; chmod +x "$D/cli-inner.sh"
      cat > "$D/cli.sh" <<EOF
#!/bin/sh
PORT=$port "$EVERYTHING_SERVER" streamableHttp > "$D/everything.log" 2>&1 &
EV=\$!
"$PCPCTL" mcp --name ev --url http://127.0.0.1:$port/mcp --listen 127.0.0.1:$((port + 1)) \
  2> "$D/gateway.log" &
GW=\$!
for _ in \$(seq 100); do grep -q serving "$D/gateway.log" 2>/dev/null && break; sleep 0.05; done
sleep 1
"$D/cli-inner.sh"; rc=\$?
kill \$EV \$GW
exit \$rc
EOF
      t0=$(now); run_cli yes; stop_model
      verdict "$cli-$kase" "$(elapsed "$t0")" prompt:mcp.ev.echo \
        "said:pcp-confirm denied this tool call: mcp.ev.echo (user_denied)" ;;
    nodesktop)
      servers ev "$EVERYTHING_SERVER"
      start_model "ev_+echo" '{"message": "hello"}'
      write_cli "$cli"; t0=$(now); run_cli no; stop_model
      verdict "$cli-$kase" "$(elapsed "$t0")" noprompt \
        "said:pcp-confirm denied this tool call: no compositor to ask" ;;
  esac
}

for server in "$FS_SERVER" "$EVERYTHING_SERVER"; do
  [ -x "$server" ] || { echo "FAIL missing MCP server $server"; FAIL=$((FAIL + 1)); }
done
for w in "${WHICH[@]}"; do
  case "$w" in
    claude|codex|gemini)
      if [ ! -x "$AGENTS_BIN/$w" ]; then
        echo "FAIL $w: not found in $AGENTS_BIN"; FAIL=$((FAIL + 1)); continue
      fi
      for kase in read write nodesktop http; do mcp_case "$w" "$kase"; done ;;
    *) echo "usage: $0 [claude|codex|gemini]..." >&2; exit 2 ;;
  esac
done
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
