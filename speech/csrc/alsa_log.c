/* ALSA's library prints its own errors to stderr (e.g. "Unknown PCM pipewire" each time cpal
 * looks for a device that this machine does not define). This handler formats them and hands
 * them to Rust (pcp_speech::alsa_log), which logs them through tracing at debug level. It is C
 * because ALSA's handler type is variadic, which stable Rust cannot define. */
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

void pcp_speech_alsa_message(const char *file, int line, const char *function, int err,
                             const char *message);

static void pcp_speech_alsa_handler(const char *file, int line, const char *function, int err,
                                    const char *fmt, ...) {
    char message[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    pcp_speech_alsa_message(file, line, function, err, message);
}

int pcp_speech_route_alsa_errors(void) {
    return snd_lib_error_set_handler(pcp_speech_alsa_handler);
}
