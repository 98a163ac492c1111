/*
 * ssh — the ssh sandbox provider (see ssh.h and docs/sandbox-ssh.md).
 *
 * libssh sessions are not thread-safe, so every call on a session happens
 * under that session's mutex.  Channel data does not wait for its own
 * thread: channel callbacks put it into the command's pending buffers,
 * whichever thread happens to be reading the socket, and wake the owner
 * through its eventfd.  An exec thread therefore sleeps in poll() on the
 * session's socket and its own eventfd, never holding the mutex while it
 * waits.
 */
#include "core/clock.h"
#include "core/dl.h"
#include "core/rand.h"
#include "core/secret.h"
#include "core/size.h"
#include "sandbox/ssh.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

/* libssh is loaded when the first ssh sandbox is made (core/dl.h): only
 * the ssh provider needs it, and linked it would map libssh and its
 * crypto library into every sluice process. */
#define SSH_FNS(X) \
    X(sftp_attributes_free) X(sftp_close) X(sftp_closedir) X(sftp_dir_eof) X(sftp_free) \
    X(sftp_fstat) X(sftp_get_error) X(sftp_init) X(sftp_mkdir) X(sftp_new) X(sftp_open) \
    X(sftp_opendir) X(sftp_read) X(sftp_readdir) X(sftp_write) X(ssh_channel_close) \
    X(ssh_channel_free) X(ssh_channel_get_exit_status) X(ssh_channel_is_eof) \
    X(ssh_channel_is_open) X(ssh_channel_new) X(ssh_channel_open_session) X(ssh_channel_poll) \
    X(ssh_channel_read_nonblocking) X(ssh_channel_read_timeout) X(ssh_channel_request_exec) \
    X(ssh_channel_send_eof) X(ssh_channel_window_size) X(ssh_channel_write) \
    X(ssh_clean_pubkey_hash) X(ssh_connect) X(ssh_disconnect) X(ssh_event_add_session) \
    X(ssh_event_dopoll) X(ssh_event_free) X(ssh_event_new) X(ssh_event_remove_session) \
    X(ssh_free) X(ssh_get_error) X(ssh_get_fd) X(ssh_get_fingerprint_hash) \
    X(ssh_get_publickey_hash) X(ssh_get_server_publickey) X(ssh_get_status) X(ssh_is_connected) \
    X(ssh_key_free) X(ssh_new) X(ssh_options_set) X(ssh_pki_import_privkey_base64) \
    X(ssh_pki_import_privkey_file) X(ssh_remove_channel_callbacks) \
    X(ssh_session_is_known_server) X(ssh_set_channel_callbacks) X(ssh_string_free_char) \
    X(ssh_userauth_password) X(ssh_userauth_publickey)
#define SSH_PTR(f) static __typeof__(&f) p_##f;
SSH_FNS(SSH_PTR)
#define SSH_SYM(f) {#f, (void **)&p_##f},
static const sl_dl_sym ssh_syms[] = {SSH_FNS(SSH_SYM){NULL, NULL}};
static const char *const ssh_names[] = {"libssh.so.4", "libssh.so", NULL};
static sl_dl_lib ssh_lib = {.what = "libssh", .sonames = ssh_names, .package = "libssh-4",
                            .syms = ssh_syms};

#define sftp_attributes_free p_sftp_attributes_free
#define sftp_close p_sftp_close
#define sftp_closedir p_sftp_closedir
#define sftp_dir_eof p_sftp_dir_eof
#define sftp_free p_sftp_free
#define sftp_fstat p_sftp_fstat
#define sftp_get_error p_sftp_get_error
#define sftp_init p_sftp_init
#define sftp_mkdir p_sftp_mkdir
#define sftp_new p_sftp_new
#define sftp_open p_sftp_open
#define sftp_opendir p_sftp_opendir
#define sftp_read p_sftp_read
#define sftp_readdir p_sftp_readdir
#define sftp_write p_sftp_write
#define ssh_channel_close p_ssh_channel_close
#define ssh_channel_free p_ssh_channel_free
#define ssh_channel_get_exit_status p_ssh_channel_get_exit_status
#define ssh_channel_is_eof p_ssh_channel_is_eof
#define ssh_channel_is_open p_ssh_channel_is_open
#define ssh_channel_new p_ssh_channel_new
#define ssh_channel_open_session p_ssh_channel_open_session
#define ssh_channel_poll p_ssh_channel_poll
#define ssh_channel_read_nonblocking p_ssh_channel_read_nonblocking
#define ssh_channel_read_timeout p_ssh_channel_read_timeout
#define ssh_channel_request_exec p_ssh_channel_request_exec
#define ssh_channel_send_eof p_ssh_channel_send_eof
#define ssh_channel_window_size p_ssh_channel_window_size
#define ssh_channel_write p_ssh_channel_write
#define ssh_clean_pubkey_hash p_ssh_clean_pubkey_hash
#define ssh_connect p_ssh_connect
#define ssh_disconnect p_ssh_disconnect
#define ssh_event_add_session p_ssh_event_add_session
#define ssh_event_dopoll p_ssh_event_dopoll
#define ssh_event_free p_ssh_event_free
#define ssh_event_new p_ssh_event_new
#define ssh_event_remove_session p_ssh_event_remove_session
#define ssh_free p_ssh_free
#define ssh_get_error p_ssh_get_error
#define ssh_get_fd p_ssh_get_fd
#define ssh_get_fingerprint_hash p_ssh_get_fingerprint_hash
#define ssh_get_publickey_hash p_ssh_get_publickey_hash
#define ssh_get_server_publickey p_ssh_get_server_publickey
#define ssh_get_status p_ssh_get_status
#define ssh_is_connected p_ssh_is_connected
#define ssh_key_free p_ssh_key_free
#define ssh_new p_ssh_new
#define ssh_options_set p_ssh_options_set
#define ssh_pki_import_privkey_base64 p_ssh_pki_import_privkey_base64
#define ssh_pki_import_privkey_file p_ssh_pki_import_privkey_file
#define ssh_remove_channel_callbacks p_ssh_remove_channel_callbacks
#define ssh_session_is_known_server p_ssh_session_is_known_server
#define ssh_set_channel_callbacks p_ssh_set_channel_callbacks
#define ssh_string_free_char p_ssh_string_free_char
#define ssh_userauth_password p_ssh_userauth_password
#define ssh_userauth_publickey p_ssh_userauth_publickey

#define MAX_SESSIONS 16
#define EXEC_PER_SESSION 8   /* OpenSSH's MaxSessions is 10: room for SFTP and a kill */
#define SCRIPT_MAX ((size_t)256 << 10)
#define CHUNK 32768

typedef struct sess {
    ssh_session s;
    ssh_event ev;
    int fd;
    pthread_mutex_t mu;   /* every libssh call on s, ev, sftp */
    int active;           /* exec channels (pool_mu) */
    bool broken;
    sftp_session sftp;
} sess;

typedef struct job {
    struct job *next;
    unsigned id;
    sess *se;
    ssh_channel ch;
    struct ssh_channel_callbacks_struct cb;
    int efd;
    /* written by channel callbacks, under se->mu */
    sl_buf pend[2];
    bool eof, closed, have_exit;
    int code;
    char sig[32];
} job;

typedef struct {
    sl_sandbox base;
    char id[17];
    char *ws, *ctl;
    char *host, *user, *password, *base_path, *fp_want, *known_hosts;
    char fp[128];
    int port;
    long timeout_s;
    bool insecure;
    ssh_key key;
    bool use_setsid, limit_procs;
    int cpu_seconds, max_open_files, max_procs;
    uint64_t max_file_bytes;
    pthread_mutex_t pool_mu;  /* pool, n_sess, active counts, jobs, next_job */
    sess *pool[MAX_SESSIONS];
    int n_sess;
    job *jobs;
    unsigned next_job;
} ssh_sb;

static const sl_sandbox_ops ssh_ops;

/* Appends s as one single-quoted shell word ('it'\''s'). */
static void sq(sl_buf *b, const char *s)
{
    sl_buf_addc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            sl_buf_adds(b, "'\\''");
        else
            sl_buf_addc(b, *s);
    }
    sl_buf_addc(b, '\'');
}

static char *abs_path(const ssh_sb *s, const char *path)
{
    if (!path || !path[0] || !strcmp(path, "."))
        return sl_xstrdup(s->ws);
    if (path[0] == '/')
        return sl_xstrdup(path);
    return sl_xasprintf("%s/%s", s->ws, path);
}

/* ---- settings ---- */

static const char *const known_keys[] = {
    "host", "port", "user", "password", "private_key_file", "private_key",
    "private_key_passphrase", "base_path", "host_key_sha256", "known_hosts",
    "insecure_skip_host_key_check", "connect_timeout_s", "vm_enforces_network", NULL};

static int get_str(const sl_value *set, const char *key, bool required, const char **out,
                   sl_err *err)
{
    const sl_value *v = json_object_get(set, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required)
            return sl_err_set(err, SL_EINVAL,
                              "sandbox.ssh.%s is missing: the ssh sandbox provider needs host "
                              "and user (and password or private_key_file)",
                              key);
        return 0;
    }
    if (!json_is_string(v) || !json_string_length(v))
        return sl_err_set(err, SL_EINVAL, "sandbox.ssh.%s must be a non-empty string", key);
    if (strlen(json_string_value(v)) != json_string_length(v))
        return sl_err_set(err, SL_EINVAL, "sandbox.ssh.%s must not contain NUL bytes", key);
    *out = json_string_value(v);
    return 0;
}

static int get_bool(const sl_value *set, const char *key, bool *out, sl_err *err)
{
    const sl_value *v = json_object_get(set, key);
    *out = false;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return sl_err_set(err, SL_EINVAL, "sandbox.ssh.%s must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

static int parse_settings(ssh_sb *s, const sl_sandbox_opts *o, const char **key_text,
                          const char **key_file, const char **passphrase, bool *vm_net,
                          sl_err *err)
{
    const sl_value *set = o->settings;
    if (!set || json_is_null(set))
        return sl_err_set(err, SL_EINVAL,
                          "sandbox provider 'ssh' has no settings: set sandbox.ssh.host and "
                          "sandbox.ssh.user, and sandbox.ssh.password or "
                          "sandbox.ssh.private_key_file");
    if (!json_is_object(set))
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.ssh must be a mapping (host, port, user, password or "
                          "private_key_file, base_path, host_key_sha256 ...)");
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)set, k, v) {
        bool ok = false;
        for (const char *const *kk = known_keys; *kk && !ok; kk++)
            ok = !strcmp(*kk, k);
        if (!ok)
            return sl_err_set(err, SL_EINVAL,
                              "sandbox.ssh.%s is not a setting of the ssh provider (known: "
                              "host, port, user, password, private_key_file, private_key, "
                              "private_key_passphrase, base_path, host_key_sha256, "
                              "known_hosts, insecure_skip_host_key_check, connect_timeout_s, "
                              "vm_enforces_network)",
                              k);
    }
    const char *host, *user, *pw, *base, *fp, *kh;
    if (get_str(set, "host", true, &host, err) || get_str(set, "user", true, &user, err) ||
        get_str(set, "password", false, &pw, err) ||
        get_str(set, "private_key_file", false, key_file, err) ||
        get_str(set, "private_key", false, key_text, err) ||
        get_str(set, "private_key_passphrase", false, passphrase, err) ||
        get_str(set, "base_path", false, &base, err) ||
        get_str(set, "host_key_sha256", false, &fp, err) ||
        get_str(set, "known_hosts", false, &kh, err) ||
        get_bool(set, "insecure_skip_host_key_check", &s->insecure, err) ||
        get_bool(set, "vm_enforces_network", vm_net, err))
        return -1;
    if (*key_file && *key_text)
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.ssh: set private_key_file or private_key, not both");
    if (!pw && !*key_file && !*key_text)
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.ssh: no credentials for %s@%s: set password, "
                          "private_key_file or private_key",
                          user, host);
    s->port = 22;
    v = json_object_get(set, "port");
    if (v && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535)
            return sl_err_set(err, SL_EINVAL,
                              "sandbox.ssh.port must be a whole number from 1 to 65535");
        s->port = (int)json_integer_value(v);
    }
    s->timeout_s = 10;
    v = json_object_get(set, "connect_timeout_s");
    if (v && !json_is_null(v)) {
        if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 3600)
            return sl_err_set(err, SL_EINVAL,
                              "sandbox.ssh.connect_timeout_s must be a number of seconds "
                              "above 0 (at most 3600)");
        s->timeout_s = (long)json_number_value(v);
        if (s->timeout_s < 1)
            s->timeout_s = 1;
    }
    if (!base)
        base = "/tmp/sluice-sandboxes";
    if (base[0] != '/' || strstr(base, "/../") || !strcmp(base, "/") ||
        strlen(base) > 1024 || (strlen(base) >= 3 && !strcmp(base + strlen(base) - 3, "/..")))
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.ssh.base_path must be an absolute folder other than / "
                          "without '..' (got '%s')",
                          base);
    if (fp && strncmp(fp, "SHA256:", 7))
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.ssh.host_key_sha256 must look like \"SHA256:...\" as "
                          "`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` prints it "
                          "(got '%s')",
                          fp);
    if (fp && kh)
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.ssh: set host_key_sha256 or known_hosts, not both");
    if (strchr(host, '\n') || strchr(user, '\n'))
        return sl_err_set(err, SL_EINVAL, "sandbox.ssh: host and user must be one line");
    s->host = sl_xstrdup(host);
    s->user = sl_xstrdup(user);
    s->password = pw ? sl_xstrdup(pw) : NULL;
    sl_secret_add(s->password);  /* removed when the provider is freed */
    s->base_path = sl_xstrdup(base);
    size_t bl = strlen(s->base_path);
    while (bl > 1 && s->base_path[bl - 1] == '/')
        s->base_path[--bl] = 0;
    s->fp_want = fp ? sl_xstrdup(fp) : NULL;
    s->known_hosts = kh ? sl_xstrdup(kh) : NULL;
    return 0;
}

/* ---- connections ---- */

/* Compares two "SHA256:base64" fingerprints, ignoring '=' padding. */
static bool fp_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    while (la && a[la - 1] == '=')
        la--;
    while (lb && b[lb - 1] == '=')
        lb--;
    return la == lb && !memcmp(a, b, la);
}

static int check_host_key(ssh_sb *s, ssh_session ss, sl_err *err)
{
    ssh_key key = NULL;
    unsigned char *hash = NULL;
    size_t hlen = 0;
    if (ssh_get_server_publickey(ss, &key) != SSH_OK)
        return sl_err_set(err, SL_EIO, "ssh %s:%d: the server sent no host key: %s", s->host,
                          s->port, ssh_get_error(ss));
    int rc = ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen);
    ssh_key_free(key);
    if (rc)
        return sl_err_set(err, SL_EIO, "ssh %s:%d: cannot hash the host key", s->host, s->port);
    char *fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
    ssh_clean_pubkey_hash(&hash);
    char got[sizeof s->fp];
    snprintf(got, sizeof got, "%s", fp ? fp : "?");
    ssh_string_free_char(fp);
    /* set by the first connection, before the sandbox is handed out;
     * later ones (pool growth) may only confirm it */
    if (!s->fp[0])
        memcpy(s->fp, got, sizeof got);
    else if (strcmp(s->fp, got) && !s->insecure)
        return sl_err_set(err, SL_EIO,
                          "ssh %s:%d: the host key changed from %s to %s while the sandbox "
                          "was in use; refusing to connect",
                          s->host, s->port, s->fp, got);
    if (s->insecure)
        return 0;
    if (s->fp_want) {
        if (fp_equal(s->fp, s->fp_want))
            return 0;
        return sl_err_set(err, SL_EIO,
                          "ssh %s:%d: the host key is %s but sandbox.ssh.host_key_sha256 says "
                          "%s; refusing to connect (the VM was rebuilt, or something is in "
                          "between). Check the VM's key with `ssh-keygen -lf "
                          "/etc/ssh/ssh_host_ed25519_key.pub` and update the setting",
                          s->host, s->port, s->fp, s->fp_want);
    }
    enum ssh_known_hosts_e st = ssh_session_is_known_server(ss);
    const char *file = s->known_hosts ? s->known_hosts : "~/.ssh/known_hosts";
    switch (st) {
    case SSH_KNOWN_HOSTS_OK:
        return 0;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
        return sl_err_set(err, SL_EIO,
                          "ssh %s:%d: the host key (%s) does not match the one in %s; refusing "
                          "to connect (the VM was rebuilt, or something is in between). Fix "
                          "the entry in %s or set sandbox.ssh.host_key_sha256",
                          s->host, s->port, s->fp, file, file);
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
        return sl_err_set(err, SL_EIO,
                          "ssh %s:%d: the host key (%s) is not in %s; refusing an unknown host. "
                          "Set sandbox.ssh.host_key_sha256: \"%s\" after checking it on the VM "
                          "(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), or add the host "
                          "to %s",
                          s->host, s->port, s->fp, file, s->fp, file);
    case SSH_KNOWN_HOSTS_ERROR:
    default:
        return sl_err_set(err, SL_EIO, "ssh %s:%d: cannot check %s: %s", s->host, s->port,
                          file, ssh_get_error(ss));
    }
}

static void sess_free(sess *se)
{
    if (!se)
        return;
    if (se->sftp)
        sftp_free(se->sftp);
    if (se->ev) {
        ssh_event_remove_session(se->ev, se->s);
        ssh_event_free(se->ev);
    }
    if (se->s) {
        if (ssh_is_connected(se->s))
            ssh_disconnect(se->s);
        ssh_free(se->s);
    }
    pthread_mutex_destroy(&se->mu);
    free(se);
}

static int sess_connect(ssh_sb *s, sess **out, sl_err *err)
{
    sess *se = sl_xcalloc(1, sizeof *se);
    pthread_mutex_init(&se->mu, NULL);
    se->fd = -1;
    ssh_session ss = se->s = ssh_new();
    if (!ss) {
        sess_free(se);
        return sl_err_set(err, SL_ENOMEM, "ssh: cannot make a libssh session");
    }
    bool no = false;
    int verbosity = SSH_LOG_NOLOG;
    ssh_options_set(ss, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
    ssh_options_set(ss, SSH_OPTIONS_PROCESS_CONFIG, &no);  /* not ~/.ssh/config */
    ssh_options_set(ss, SSH_OPTIONS_HOST, s->host);
    ssh_options_set(ss, SSH_OPTIONS_PORT, &s->port);
    ssh_options_set(ss, SSH_OPTIONS_USER, s->user);
    ssh_options_set(ss, SSH_OPTIONS_TIMEOUT, &s->timeout_s);
    if (s->known_hosts)
        ssh_options_set(ss, SSH_OPTIONS_KNOWNHOSTS, s->known_hosts);
    if (ssh_connect(ss) != SSH_OK) {
        sl_err_set(err, SL_EIO,
                   "ssh: cannot connect to %s:%d: %s. Check sandbox.ssh.host and port and that "
                   "sshd runs on the VM (waited up to %ld s, sandbox.ssh.connect_timeout_s)",
                   s->host, s->port, ssh_get_error(ss), s->timeout_s);
        sess_free(se);
        return -1;
    }
    if (check_host_key(s, ss, err)) {
        sess_free(se);
        return -1;
    }
    int rc = SSH_AUTH_DENIED;
    const char *tried = "";
    if (s->key) {
        rc = ssh_userauth_publickey(ss, NULL, s->key);
        tried = "the private key";
    }
    if (rc != SSH_AUTH_SUCCESS && s->password) {
        rc = ssh_userauth_password(ss, NULL, s->password);
        tried = s->key ? "the private key and the password" : "the password";
    }
    if (rc != SSH_AUTH_SUCCESS) {
        if (rc == SSH_AUTH_ERROR)
            sl_err_set(err, SL_EIO, "ssh %s@%s:%d: login failed: %s", s->user, s->host,
                       s->port, ssh_get_error(ss));
        else
            sl_err_set(err, SL_EIO,
                       "ssh %s@%s:%d: the server refused %s (authentication denied); check "
                       "sandbox.ssh.user, password and private_key_file, and the user's "
                       "authorized_keys on the VM",
                       s->user, s->host, s->port, tried);
        sess_free(se);
        return -1;
    }
    se->ev = ssh_event_new();
    if (!se->ev || ssh_event_add_session(se->ev, ss) != SSH_OK) {
        sess_free(se);
        return sl_err_set(err, SL_EIO, "ssh: cannot set up polling for %s", s->host);
    }
    se->fd = ssh_get_fd(ss);
    *out = se;
    return 0;
}

/* ---- small scripts (create, kill, destroy) ----
 *
 * Runs a script to its end on se (whose mutex the caller holds); stdout
 * goes to out, stderr to errout (either may be NULL).  Other channels'
 * data keeps flowing to their callbacks meanwhile. */
static int run_script(ssh_sb *s, sess *se, const char *script, sl_buf *out, sl_buf *errout,
                      int *code, double limit_s, sl_err *err)
{
    ssh_channel ch = ssh_channel_new(se->s);
    if (!ch)
        return sl_err_set(err, SL_EIO, "ssh %s: cannot make a channel", s->host);
    if (ssh_channel_open_session(ch) != SSH_OK ||
        ssh_channel_request_exec(ch, script) != SSH_OK) {
        sl_err_set(err, SL_EIO, "ssh %s: cannot run a command: %s", s->host,
                   ssh_get_error(se->s));
        if (ssh_get_status(se->s) & (SSH_CLOSED | SSH_CLOSED_ERROR))
            se->broken = true;
        ssh_channel_free(ch);
        return -1;
    }
    ssh_channel_send_eof(ch);
    char buf[8192];
    double t0 = sl_clock_s();
    int rc = 0;
    while (!ssh_channel_is_eof(ch)) {
        int n = ssh_channel_read_timeout(ch, buf, sizeof buf, 0, 200);
        if (n > 0 && out)
            sl_buf_add(out, buf, (size_t)n);
        while ((n >= 0) && ssh_channel_poll(ch, 1) > 0) {
            int m = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1);
            if (m <= 0)
                break;
            if (errout)
                sl_buf_add(errout, buf, (size_t)m);
        }
        if (n < 0 || !ssh_channel_is_open(ch)) {
            if (n < 0) {
                se->broken = true;
                rc = sl_err_set(err, SL_EIO, "ssh %s: the connection broke: %s", s->host,
                                ssh_get_error(se->s));
            }
            break;
        }
        if (sl_clock_s() - t0 > limit_s) {
            rc = sl_err_set(err, SL_ETIMEOUT, "ssh %s: a housekeeping command took over %.0f s",
                            s->host, limit_s);
            break;
        }
    }
    for (int n; (n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1)) > 0;)
        if (errout)
            sl_buf_add(errout, buf, (size_t)n);
    if (!rc && code)
        *code = ssh_channel_get_exit_status(ch);
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    return rc;
}

/* ---- killing ----
 *
 * Each command writes its pid (= its process group) to CTL/<n>.pid, then
 * gives up if CTL/<n>.kill exists; a kill writes the marker first and
 * reads the pid second, so one of the two always sees the other.  The
 * environment scan finds what left the group (setsid, daemons) on Linux. */
static void add_kill(ssh_sb *s, sl_buf *b, const unsigned *ids, size_t n, bool whole_sandbox)
{
    if (n) {
        sl_buf_adds(b, "c=");
        sq(b, s->ctl);
        sl_buf_adds(b, "\nfor j in");
        for (size_t i = 0; i < n; i++)
            sl_buf_addf(b, " %u", ids[i]);
        sl_buf_adds(b, "; do [ -d \"$c\" ] && : >\"$c/$j.kill\"; "
                       "if read p 2>/dev/null <\"$c/$j.pid\"; then kill -9 -\"$p\" 2>/dev/null; "
                       "fi; done\n");
    }
    for (int round = 0; round < 2; round++) {
        if (whole_sandbox)
            sl_buf_addf(b, "for e in $(grep -lsz '^SLUICE_SANDBOX=%s\\.' /proc/[0-9]*/environ "
                           "2>/dev/null); do p=${e#/proc/}; kill -9 \"${p%%/environ}\" "
                           "2>/dev/null; done\n",
                        s->id);
        else
            for (size_t i = 0; i < n; i++)
                sl_buf_addf(b, "for e in $(grep -lsxzF 'SLUICE_SANDBOX=%s.%u' "
                               "/proc/[0-9]*/environ 2>/dev/null); do p=${e#/proc/}; "
                               "kill -9 \"${p%%/environ}\" 2>/dev/null; done\n",
                            s->id, ids[i]);
    }
    sl_buf_adds(b, "exit 0\n");
}

/* Kills commands (their groups and tagged processes); the caller holds
 * se->mu. */
static void kill_on(ssh_sb *s, sess *se, const unsigned *ids, size_t n, bool whole_sandbox)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    add_kill(s, &b, ids, n, whole_sandbox);
    sl_err e = {0};
    run_script(s, se, b.data, NULL, NULL, NULL, 30, &e);
    sl_err_clear(&e);
    sl_buf_release(&b);
}

/* ---- the session pool ---- */

/* A session with room for one more command, made when none has room;
 * registers j as running there. */
static sess *pick_session(ssh_sb *s, job *j, sl_err *err)
{
    pthread_mutex_lock(&s->pool_mu);
    sess *se = NULL;
    for (int i = 0; i < s->n_sess && !se; i++)
        if (!s->pool[i]->broken && s->pool[i]->active < EXEC_PER_SESSION)
            se = s->pool[i];
    if (!se) {
        int slot = -1;
        for (int i = 0; i < s->n_sess && slot < 0; i++)
            if (s->pool[i]->broken && s->pool[i]->active == 0)
                slot = i;
        if (slot < 0 && s->n_sess < MAX_SESSIONS)
            slot = s->n_sess;
        if (slot < 0) {
            pthread_mutex_unlock(&s->pool_mu);
            sl_err_set(err, SL_ELIMIT,
                       "sandbox exec: too many commands running at once in one ssh sandbox "
                       "(at most %d)",
                       MAX_SESSIONS * EXEC_PER_SESSION);
            return NULL;
        }
        sess *fresh;
        if (sess_connect(s, &fresh, err)) {
            pthread_mutex_unlock(&s->pool_mu);
            return NULL;
        }
        if (slot < s->n_sess)
            sess_free(s->pool[slot]);
        else
            s->n_sess++;
        se = s->pool[slot] = fresh;
    }
    se->active++;
    j->se = se;
    j->id = ++s->next_job;
    j->next = s->jobs;
    s->jobs = j;
    pthread_mutex_unlock(&s->pool_mu);
    return se;
}

static void release_job(ssh_sb *s, job *j)
{
    pthread_mutex_lock(&s->pool_mu);
    j->se->active--;
    for (job **p = &s->jobs; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            break;
        }
    pthread_mutex_unlock(&s->pool_mu);
}

/* The session for files and housekeeping: the first one, remade when it
 * broke and nothing runs on it.  Returns it locked. */
static sess *file_session(ssh_sb *s, sl_err *err)
{
    pthread_mutex_lock(&s->pool_mu);
    sess *se = s->n_sess ? s->pool[0] : NULL;
    if (!se || (se->broken && se->active == 0)) {
        sess *fresh;
        if (sess_connect(s, &fresh, err)) {
            pthread_mutex_unlock(&s->pool_mu);
            return NULL;
        }
        if (se)
            sess_free(se);
        else
            s->n_sess = 1;
        se = s->pool[0] = fresh;
    }
    pthread_mutex_unlock(&s->pool_mu);
    pthread_mutex_lock(&se->mu);
    if (se->broken) {
        pthread_mutex_unlock(&se->mu);
        sl_err_set(err, SL_EIO, "ssh %s: the connection broke; try again", s->host);
        return NULL;
    }
    return se;
}

static sftp_session get_sftp(ssh_sb *s, sess *se, sl_err *err)
{
    if (se->sftp)
        return se->sftp;
    sftp_session sf = sftp_new(se->s);
    if (!sf || sftp_init(sf) != SSH_OK) {
        sl_err_set(err, SL_EIO,
                   "ssh %s: cannot start SFTP (%s); enable the sftp subsystem in the VM's "
                   "sshd_config",
                   s->host, ssh_get_error(se->s));
        if (sf)
            sftp_free(sf);
        return NULL;
    }
    se->sftp = sf;
    return sf;
}

/* ---- exec ---- */

static void wake(job *j)
{
    uint64_t one = 1;
    if (write(j->efd, &one, sizeof one) < 0) {
        /* the counter is full: the owner is awake anyway */
    }
}

static int on_data(ssh_session ss, ssh_channel ch, void *data, uint32_t len, int is_stderr,
                   void *ud)
{
    (void)ss;
    (void)ch;
    job *j = ud;
    sl_buf_add(&j->pend[is_stderr ? 1 : 0], data, len);
    wake(j);
    return (int)len;
}

static void on_eof(ssh_session ss, ssh_channel ch, void *ud)
{
    (void)ss;
    (void)ch;
    job *j = ud;
    j->eof = true;
    wake(j);
}

static void on_close(ssh_session ss, ssh_channel ch, void *ud)
{
    (void)ss;
    (void)ch;
    job *j = ud;
    j->closed = true;
    wake(j);
}

static void on_exit_status(ssh_session ss, ssh_channel ch, int status, void *ud)
{
    (void)ss;
    (void)ch;
    job *j = ud;
    j->have_exit = true;
    j->code = status;
    wake(j);
}

static void on_exit_signal(ssh_session ss, ssh_channel ch, const char *sig, int core,
                           const char *msg, const char *lang, void *ud)
{
    (void)ss;
    (void)ch;
    (void)core;
    (void)msg;
    (void)lang;
    job *j = ud;
    j->have_exit = true;
    snprintf(j->sig, sizeof j->sig, "%s", sig ? sig : "?");
    wake(j);
}

static int signal_number(const char *name)
{
    static const struct {
        const char *name;
        int sig;
    } t[] = {{"ABRT", SIGABRT}, {"ALRM", SIGALRM}, {"FPE", SIGFPE},   {"HUP", SIGHUP},
             {"ILL", SIGILL},   {"INT", SIGINT},   {"KILL", SIGKILL}, {"PIPE", SIGPIPE},
             {"QUIT", SIGQUIT}, {"SEGV", SIGSEGV}, {"TERM", SIGTERM}, {"USR1", SIGUSR1},
             {"USR2", SIGUSR2}, {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ}, {"BUS", SIGBUS},
             {"SYS", SIGSYS},   {"TRAP", SIGTRAP}};
    if (!strncmp(name, "SIG", 3) && strcmp(name, "SIG@openssh.com"))
        name += 3;
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(t[i].name, name))
            return t[i].sig;
    return 0;
}

static bool env_name_ok(const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || !(isalpha((unsigned char)kv[0]) || kv[0] == '_'))
        return false;
    for (const char *p = kv; p < eq; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return false;
    return true;
}

/* The command sent over the channel.  The login shell runs
 * `exec /bin/sh -c INNER`, so the command keeps the pid sshd made a
 * session (and process group) leader; INNER records that pid, sets the
 * limits, enters the workspace and execs `sh -lc LINE`, where LINE
 * exports the env, enters cwd and execs argv.  /bin/sh makes the ulimit
 * units POSIX ones (-f in 512-byte blocks) whatever the login shell. */
static int build_script(ssh_sb *s, const sl_sandbox_cmd *cmd, unsigned id, sl_buf *out,
                        sl_err *err)
{
    sl_buf line, inner;
    sl_buf_init(&line, SCRIPT_MAX);
    sl_buf_init(&inner, SCRIPT_MAX);
    for (const char *const *v = cmd->env; v && *v; v++) {
        if (!env_name_ok(*v)) {
            sl_buf_release(&line);
            sl_buf_release(&inner);
            return sl_err_set(err, SL_EINVAL,
                              "sandbox exec: env entry '%.60s' is not NAME=value with a NAME "
                              "of letters, digits and '_'",
                              *v);
        }
        sl_buf_adds(&line, "export ");
        sq(&line, *v);
        sl_buf_adds(&line, "; ");
    }
    if (cmd->cwd && cmd->cwd[0]) {
        sl_buf_adds(&line, "cd ");
        sq(&line, cmd->cwd);
        sl_buf_adds(&line, " && ");
    }
    sl_buf_adds(&line, "exec");
    for (const char *const *a = cmd->argv; *a; a++) {
        sl_buf_addc(&line, ' ');
        sq(&line, *a);
    }
    sl_buf_adds(&inner, "echo $$ >");
    sq(&inner, s->ctl);
    sl_buf_addf(&inner, "/%u.pid && [ ! -e ", id);
    sq(&inner, s->ctl);
    sl_buf_addf(&inner, "/%u.kill ] || exit 137\n", id);
    sl_buf_addf(&inner, "SLUICE_SANDBOX=%s.%u; export SLUICE_SANDBOX\n", s->id, id);
    if (s->cpu_seconds > 0)
        sl_buf_addf(&inner, "ulimit -t %d 2>/dev/null\n", s->cpu_seconds);
    if (s->max_open_files > 0)
        sl_buf_addf(&inner, "ulimit -n %d 2>/dev/null\n", s->max_open_files);
    if (s->max_file_bytes) {
        uint64_t blocks = s->max_file_bytes / 512;
        sl_buf_addf(&inner, "ulimit -f %" PRIu64 " 2>/dev/null\n", blocks ? blocks : 1);
    }
    if (s->limit_procs)
        sl_buf_addf(&inner, "ulimit -u %d 2>/dev/null || ulimit -p %d 2>/dev/null\n",
                    s->max_procs, s->max_procs);
    sl_buf_adds(&inner, "cd ");
    sq(&inner, s->ws);
    sl_buf_adds(&inner, " || exit 126\nexec sh -lc ");
    sq(&inner, line.data);
    sl_buf_adds(out, s->use_setsid ? "exec setsid /bin/sh -c " : "exec /bin/sh -c ");
    sq(out, inner.data);
    bool big = line.toobig || inner.toobig || out->toobig;
    sl_buf_release(&line);
    sl_buf_release(&inner);
    if (big)
        return sl_err_set(err, SL_ELIMIT,
                          "sandbox exec: the command line and environment exceed %zu KiB; pass "
                          "large data on stdin or in a file",
                          SCRIPT_MAX / 1024 / 4);
    return 0;
}

typedef struct {
    sl_buf *into;
    sl_sandbox_out_fn fn;
    size_t bytes;
    bool *truncated;
} stream;

static void job_free(job *j)
{
    if (j->efd >= 0)
        close(j->efd);
    sl_buf_release(&j->pend[0]);
    sl_buf_release(&j->pend[1]);
    free(j);
}

static int ssh_exec(sl_sandbox *sb, const sl_sandbox_cmd *cmd, sl_sandbox_result *res,
                    sl_err *err)
{
    ssh_sb *s = (ssh_sb *)sb;
    if (!cmd->argv || !cmd->argv[0])
        return sl_err_set(err, SL_EINVAL, "sandbox exec: no command given");
    job *j = sl_xcalloc(1, sizeof *j);
    sl_buf_init(&j->pend[0], 0);
    sl_buf_init(&j->pend[1], 0);
    j->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (j->efd < 0) {
        job_free(j);
        return sl_err_set(err, SL_EIO, "sandbox exec: eventfd: %s", strerror(errno));
    }
    double t0 = sl_clock_s();
    sess *se = pick_session(s, j, err);
    if (!se) {
        job_free(j);
        return -1;
    }
    sl_buf script;
    sl_buf_init(&script, SCRIPT_MAX);
    if (build_script(s, cmd, j->id, &script, err)) {
        sl_buf_release(&script);
        release_job(s, j);
        job_free(j);
        return -1;
    }
    ssh_callbacks_init(&j->cb);
    j->cb.userdata = j;
    j->cb.channel_data_function = on_data;
    j->cb.channel_eof_function = on_eof;
    j->cb.channel_close_function = on_close;
    j->cb.channel_exit_status_function = on_exit_status;
    j->cb.channel_exit_signal_function = on_exit_signal;

    pthread_mutex_lock(&se->mu);
    int rc = -1;
    j->ch = ssh_channel_new(se->s);
    if (!j->ch) {
        sl_err_set(err, SL_EIO, "ssh %s: cannot make a channel", s->host);
    } else {
        ssh_set_channel_callbacks(j->ch, &j->cb);
        if (ssh_channel_open_session(j->ch) != SSH_OK)
            sl_err_set(err, SL_EIO,
                       "ssh %s: cannot open a session channel (%s); the VM's sshd may limit "
                       "sessions per connection (MaxSessions)",
                       s->host, ssh_get_error(se->s));
        else if (ssh_channel_request_exec(j->ch, script.data) != SSH_OK)
            sl_err_set(err, SL_EIO, "ssh %s: cannot start the command: %s", s->host,
                       ssh_get_error(se->s));
        else
            rc = 0;
        if (rc && (ssh_get_status(se->s) & (SSH_CLOSED | SSH_CLOSED_ERROR)))
            se->broken = true;
    }
    bool feed = cmd->stdin_data && cmd->stdin_len && !cmd->inherit_stdin;
    bool feed_fd0 = cmd->inherit_stdin;
    if (!rc && !feed && !feed_fd0)
        ssh_channel_send_eof(j->ch);
    pthread_mutex_unlock(&se->mu);
    sl_buf_release(&script);
    if (rc)
        goto done;

    stream ss[2] = {{&res->out, cmd->on_stdout, 0, &res->out_truncated},
                    {&res->err, cmd->on_stderr, 0, &res->err_truncated}};
    enum { K_NONE, K_TIMEOUT, K_OUTPUT, K_CANCEL, K_LEFTOVER } killed = K_NONE;
    double exit_at = 0, killed_at = 0;
    size_t in_off = 0;
    bool have_exit = false, eof = false, closed = false, broken = false;
    sl_buf got[2];
    sl_buf_init(&got[0], 0);
    sl_buf_init(&got[1], 0);
    for (;;) {
        pthread_mutex_lock(&se->mu);
        if (!se->broken && ssh_event_dopoll(se->ev, 0) == SSH_ERROR)
            se->broken = true;
        if (!se->broken && (ssh_get_status(se->s) & (SSH_CLOSED | SSH_CLOSED_ERROR)))
            se->broken = true;
        broken = se->broken;
        for (int k = 0; k < 2; k++) {
            sl_buf t = got[k];
            got[k] = j->pend[k];
            j->pend[k] = t;
            sl_buf_reset(&j->pend[k]);
        }
        if (!broken && !j->closed && (feed || feed_fd0)) {
            size_t win = ssh_channel_window_size(j->ch);
            if (win > CHUNK)
                win = CHUNK;
            if (feed && win) {
                size_t n = cmd->stdin_len - in_off;
                if (n > win)
                    n = win;
                int w = ssh_channel_write(j->ch, cmd->stdin_data + in_off, (uint32_t)n);
                if (w > 0)
                    in_off += (size_t)w;
                if (w < 0 || in_off >= cmd->stdin_len) {
                    ssh_channel_send_eof(j->ch);
                    feed = false;
                }
            } else if (feed_fd0 && win) {
                struct pollfd p0 = {0, POLLIN, 0};
                if (poll(&p0, 1, 0) == 1) {
                    char buf[CHUNK];
                    ssize_t n = read(0, buf, win);
                    if (n > 0 && ssh_channel_write(j->ch, buf, (uint32_t)n) < 0)
                        n = -1;
                    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                        ssh_channel_send_eof(j->ch);
                        feed_fd0 = false;
                    }
                }
            }
        } else if (broken || j->closed) {
            feed = feed_fd0 = false;
        }
        have_exit = j->have_exit;
        eof = j->eof;
        closed = j->closed;
        pthread_mutex_unlock(&se->mu);

        for (int k = 0; k < 2; k++) {
            if (!got[k].len)
                continue;
            stream *x = &ss[k];
            size_t keep = got[k].len;
            if (cmd->max_output_bytes && x->bytes + keep > cmd->max_output_bytes) {
                keep = cmd->max_output_bytes - x->bytes;
                *x->truncated = true;
                if (killed == K_NONE) {
                    killed = K_OUTPUT;
                    res->hit = SL_SBLIMIT_OUTPUT;
                    snprintf(res->limit, sizeof res->limit, "%s output (%zu bytes)",
                             k == 0 ? "stdout" : "stderr", cmd->max_output_bytes);
                }
            }
            x->bytes += keep;
            if (keep) {
                if (x->fn)
                    x->fn(got[k].data, keep, cmd->ud);
                else
                    sl_buf_add(x->into, got[k].data, keep);
            }
            sl_buf_reset(&got[k]);
        }
        double t = sl_clock_s();
        if (have_exit && !exit_at)
            exit_at = t;
        if (closed || (have_exit && eof))
            break;
        if (broken) {
            if (!have_exit && killed == K_NONE) {
                sl_err_set(err, SL_EIO,
                           "ssh %s: the connection broke while '%s' ran; the command's end is "
                           "unknown",
                           s->host, cmd->argv[0]);
                rc = -1;
            }
            break;
        }
        if (killed == K_NONE && !have_exit) {
            if (cmd->timeout_s > 0 && t - t0 >= cmd->timeout_s)
                killed = K_TIMEOUT;
            else if (cmd->cancelled && cmd->cancelled(cmd->ud))
                killed = K_CANCEL;
        }
        /* The command ended but something it started still holds its
         * output open: kill the group, as the local provider does. */
        if (killed == K_NONE && have_exit && t - exit_at > 0.25)
            killed = K_LEFTOVER;
        if (killed != K_NONE && !killed_at) {
            killed_at = t;
            pthread_mutex_lock(&se->mu);
            kill_on(s, se, &j->id, 1, false);
            pthread_mutex_unlock(&se->mu);
            continue;
        }
        if (killed_at && t - killed_at > 3)
            break;  /* the kill went through; the channel is slow to close */
        int wait_ms = 50;
        if (cmd->timeout_s > 0 && killed == K_NONE) {
            double left = t0 + cmd->timeout_s - t;
            if (left * 1000 < wait_ms)
                wait_ms = left > 0 ? (int)(left * 1000) + 1 : 0;
        }
        if (have_exit && killed == K_NONE)
            wait_ms = 20;
        struct pollfd p[3] = {{se->fd, POLLIN, 0}, {j->efd, POLLIN, 0}, {0, POLLIN, 0}};
        poll(p, feed_fd0 ? 3 : 2, wait_ms);
        uint64_t cnt;
        if (read(j->efd, &cnt, sizeof cnt) < 0) {
            /* nothing pending */
        }
    }
    sl_buf_release(&got[0]);
    sl_buf_release(&got[1]);
    res->seconds = sl_clock_s() - t0;
    if (rc)
        goto done;
    if (killed == K_TIMEOUT) {
        res->kind = SL_EXIT_TIMEOUT;
    } else if (killed == K_CANCEL) {
        res->kind = SL_EXIT_CANCELED;
    } else if (killed == K_OUTPUT) {
        res->kind = SL_EXIT_LIMIT;
        res->sig = SIGKILL;
    } else if (j->sig[0]) {
        int sig = signal_number(j->sig);
        char size[32];
        if (sig == SIGXCPU) {
            res->kind = SL_EXIT_LIMIT;
            res->sig = sig;
            res->hit = SL_SBLIMIT_CPU;
            snprintf(res->limit, sizeof res->limit, "CPU time (%d s)", s->cpu_seconds);
        } else if (sig == SIGXFSZ) {
            sl_size_text(s->max_file_bytes, size, sizeof size);
            res->kind = SL_EXIT_LIMIT;
            res->sig = sig;
            res->hit = SL_SBLIMIT_FILE_SIZE;
            snprintf(res->limit, sizeof res->limit, "file size (%s)", size);
        } else if (!sig && (s->cpu_seconds > 0 || s->max_file_bytes)) {
            /* OpenSSH names only 13 signals and sends "SIG@openssh.com"
             * for the rest, SIGXCPU and SIGXFSZ among them */
            sl_size_text(s->max_file_bytes, size, sizeof size);
            res->kind = SL_EXIT_LIMIT;
            res->hit = SL_SBLIMIT_CPU_OR_FILE_SIZE;
            snprintf(res->limit, sizeof res->limit, "CPU time (%d s) or file size (%s)",
                     s->cpu_seconds, size);
        } else {
            res->kind = SL_EXIT_SIGNALED;
            res->sig = sig ? sig : SIGKILL;
        }
    } else if (j->have_exit) {
        res->kind = SL_EXIT_EXITED;
        res->code = j->code;
    } else {
        rc = sl_err_set(err, SL_EIO,
                        "ssh %s: the server closed the command's channel without an exit "
                        "status",
                        s->host);
    }
done:
    pthread_mutex_lock(&se->mu);
    if (j->ch) {
        ssh_remove_channel_callbacks(j->ch, &j->cb);
        if (!se->broken && ssh_channel_is_open(j->ch))
            ssh_channel_close(j->ch);
        ssh_channel_free(j->ch);
        j->ch = NULL;
    }
    pthread_mutex_unlock(&se->mu);
    release_job(s, j);
    job_free(j);
    return rc;
}

static void ssh_kill(sl_sandbox *sb)
{
    ssh_sb *s = (ssh_sb *)sb;
    pthread_mutex_lock(&s->pool_mu);
    size_t n = 0;
    for (job *j = s->jobs; j; j = j->next)
        n++;
    unsigned *ids = sl_xcalloc(n + 1, sizeof *ids);
    n = 0;
    for (job *j = s->jobs; j; j = j->next)
        ids[n++] = j->id;
    pthread_mutex_unlock(&s->pool_mu);
    sl_err e = {0};
    sess *se = file_session(s, &e);
    if (se) {
        kill_on(s, se, ids, n, true);
        pthread_mutex_unlock(&se->mu);
    }
    sl_err_clear(&e);
    free(ids);
}

/* ---- files ---- */

static const char *sftp_why(sftp_session sf, ssh_session ss)
{
    switch (sftp_get_error(sf)) {
    case SSH_FX_NO_SUCH_FILE:
        return "no such file or folder";
    case SSH_FX_PERMISSION_DENIED:
        return "permission denied";
    case SSH_FX_FILE_ALREADY_EXISTS:
        return "it already exists";
    case SSH_FX_EOF:
        return "end of file";
    case SSH_FX_FAILURE:
        return "the server reported a failure (a folder in the way, or the disk is full)";
    default:
        return ssh_get_error(ss);
    }
}

/* mkdir -p of the folder that holds path (path is absolute). */
static void mkdir_parents(sftp_session sf, const char *path)
{
    char *p = sl_xstrdup(path);
    char *slash = strrchr(p, '/');
    if (slash && slash != p) {
        *slash = 0;
        for (char *q = p + 1;; q++) {
            if (*q == '/' || !*q) {
                char c = *q;
                *q = 0;
                sftp_mkdir(sf, p, 0755);
                *q = c;
                if (!c)
                    break;
            }
        }
    }
    free(p);
}

static int put_file(ssh_sb *s, sess *se, sftp_session sf, const char *path, const void *data,
                    size_t len, mode_t mode, sl_err *err)
{
    sftp_file f = sftp_open(sf, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (!f && sftp_get_error(sf) == SSH_FX_NO_SUCH_FILE) {
        mkdir_parents(sf, path);
        f = sftp_open(sf, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    }
    if (!f)
        return sl_err_set(err, SL_EIO, "sandbox: cannot write %s on %s: %s", path, s->host,
                          sftp_why(sf, se->s));
    const char *p = data;
    while (len) {
        size_t n = len > CHUNK ? CHUNK : len;
        ssize_t w = sftp_write(f, p, n);
        if (w <= 0) {
            sl_err_set(err, SL_EIO, "sandbox: writing %s on %s: %s", path, s->host,
                       sftp_why(sf, se->s));
            sftp_close(f);
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    if (sftp_close(f) != SSH_OK)
        return sl_err_set(err, SL_EIO, "sandbox: writing %s on %s: %s", path, s->host,
                          sftp_why(sf, se->s));
    return 0;
}

static int ssh_upload(sl_sandbox *sb, const char *path, const void *data, size_t len,
                      sl_err *err)
{
    ssh_sb *s = (ssh_sb *)sb;
    if (!path || !path[0])
        return sl_err_set(err, SL_EINVAL, "sandbox upload: no path given");
    sess *se = file_session(s, err);
    if (!se)
        return -1;
    char *abs = abs_path(s, path);
    sftp_session sf = get_sftp(s, se, err);
    int rc = sf ? put_file(s, se, sf, abs, data, len, 0644, err) : -1;
    pthread_mutex_unlock(&se->mu);
    free(abs);
    return rc;
}

static int ssh_download(sl_sandbox *sb, const char *path, size_t max, sl_buf *out, sl_err *err)
{
    ssh_sb *s = (ssh_sb *)sb;
    if (!path || !path[0])
        return sl_err_set(err, SL_EINVAL, "sandbox download: no path given");
    sess *se = file_session(s, err);
    if (!se)
        return -1;
    char *abs = abs_path(s, path);
    int rc = -1;
    sftp_session sf = get_sftp(s, se, err);
    sftp_file f = sf ? sftp_open(sf, abs, O_RDONLY, 0) : NULL;
    if (sf && !f) {
        sl_err_set(err, SL_EIO, "sandbox: cannot read %s on %s: %s", abs, s->host,
                   sftp_why(sf, se->s));
        goto out;
    }
    if (!f)
        goto out;
    sftp_attributes a = sftp_fstat(f);
    if (a && a->type == SSH_FILEXFER_TYPE_DIRECTORY) {
        sl_err_set(err, SL_EINVAL, "sandbox: %s is a folder, not a file", abs);
        sftp_attributes_free(a);
        goto close;
    }
    if (a && max && a->size > max) {
        sl_err_set(err, SL_ELIMIT, "sandbox: %s is %" PRIu64 " bytes, over the limit of %zu",
                   abs, a->size, max);
        sftp_attributes_free(a);
        goto close;
    }
    sftp_attributes_free(a);
    char buf[CHUNK];
    size_t total = 0;
    for (;;) {
        ssize_t n = sftp_read(f, buf, sizeof buf);
        if (n < 0) {
            sl_err_set(err, SL_EIO, "sandbox: reading %s on %s: %s", abs, s->host,
                       sftp_why(sf, se->s));
            goto close;
        }
        if (n == 0)
            break;
        total += (size_t)n;
        if (max && total > max) {
            sl_err_set(err, SL_ELIMIT, "sandbox: %s grew past the limit of %zu bytes", abs,
                       max);
            goto close;
        }
        sl_buf_add(out, buf, (size_t)n);
    }
    rc = 0;
close:
    sftp_close(f);
out:
    pthread_mutex_unlock(&se->mu);
    free(abs);
    return rc;
}

static int ssh_list(sl_sandbox *sb, const char *dir, size_t limit, sl_value **out, sl_err *err)
{
    ssh_sb *s = (ssh_sb *)sb;
    sess *se = file_session(s, err);
    if (!se)
        return -1;
    char *abs = abs_path(s, dir);
    int rc = -1;
    sftp_session sf = get_sftp(s, se, err);
    sftp_dir d = sf ? sftp_opendir(sf, abs) : NULL;
    if (sf && !d)
        sl_err_set(err, SL_EIO, "sandbox: cannot list %s on %s: %s", abs, s->host,
                   sftp_why(sf, se->s));
    if (d) {
        size_t n = 0, cap = 16;
        sl_value **items = sl_xmalloc(sizeof *items * cap);
        sftp_attributes a;
        /* readdir reports lstat data: a link is reported as a link */
        while ((a = sftp_readdir(sf, d))) {
            if (a->name && strcmp(a->name, ".") && strcmp(a->name, "..")) {
                const char *type = a->type == SSH_FILEXFER_TYPE_REGULAR     ? "file"
                                   : a->type == SSH_FILEXFER_TYPE_DIRECTORY ? "dir"
                                   : a->type == SSH_FILEXFER_TYPE_SYMLINK   ? "link"
                                                                            : "other";
                if (n == cap)
                    items = sl_xrealloc(items, sizeof *items * (cap *= 2));
                items[n++] = json_pack("{s:s, s:s, s:I}", "name", a->name, "type", type,
                                       "size", (json_int_t)a->size);
            }
            sftp_attributes_free(a);
        }
        bool ok = sftp_dir_eof(d);
        sftp_closedir(d);
        sl_value *arr = sl_sandbox_list_done(items, n, limit);
        if (ok) {
            *out = arr;
            rc = 0;
        } else {
            json_decref(arr);
            sl_err_set(err, SL_EIO, "sandbox: listing %s on %s: %s", abs, s->host,
                       sftp_why(sf, se->s));
        }
    }
    pthread_mutex_unlock(&se->mu);
    free(abs);
    return rc;
}

/* ---- binds: copies of host trees, made read-only ---- */

static int copy_tree(ssh_sb *s, sess *se, sftp_session sf, const char *host, const char *target,
                     int depth, sl_err *err)
{
    struct stat st;
    if (depth > 64)
        return sl_err_set(err, SL_EINVAL, "sandbox bind: %s is nested too deeply", host);
    if (lstat(host, &st))
        return sl_err_set(err, SL_EINVAL, "sandbox bind: cannot read %s: %s", host,
                          strerror(errno));
    if (S_ISLNK(st.st_mode))
        return sl_err_set(err, SL_EUNSUPPORTED,
                          "sandbox bind: %s is a symbolic link; the ssh provider copies only "
                          "regular files and folders (bind the link's target, or remove it)",
                          host);
    if (S_ISREG(st.st_mode)) {
        int fd = open(host, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return sl_err_set(err, SL_EINVAL, "sandbox bind: cannot read %s: %s", host,
                              strerror(errno));
        sl_buf data;
        sl_buf_init(&data, (size_t)1 << 30);
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            sl_buf_add(&data, buf, (size_t)n);
        int e = errno;
        close(fd);
        int rc;
        if (n < 0)
            rc = sl_err_set(err, SL_EIO, "sandbox bind: reading %s: %s", host, strerror(e));
        else if (data.toobig)
            rc = sl_err_set(err, SL_ELIMIT, "sandbox bind: %s is over 1 GiB", host);
        else
            rc = put_file(s, se, sf, target, data.data ? data.data : "", data.len,
                          (st.st_mode & 0777) | 0600, err);
        sl_buf_release(&data);
        return rc;
    }
    if (!S_ISDIR(st.st_mode))
        return sl_err_set(err, SL_EUNSUPPORTED,
                          "sandbox bind: %s is not a regular file or folder; the ssh provider "
                          "copies only those",
                          host);
    if (sftp_mkdir(sf, target, 0755) && sftp_get_error(sf) == SSH_FX_NO_SUCH_FILE) {
        mkdir_parents(sf, target);
        sftp_mkdir(sf, target, 0755);
    }
    DIR *d = opendir(host);
    if (!d)
        return sl_err_set(err, SL_EINVAL, "sandbox bind: cannot read %s: %s", host,
                          strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *h = sl_xasprintf("%s/%s", host, e->d_name);
        char *t = sl_xasprintf("%s/%s", target, e->d_name);
        rc = copy_tree(s, se, sf, h, t, depth + 1, err);
        free(h);
        free(t);
    }
    closedir(d);
    return rc;
}

static int copy_binds(ssh_sb *s, const sl_sandbox_opts *o, sl_err *err)
{
    if (!o->n_binds)
        return 0;
    sess *se = file_session(s, err);
    if (!se)
        return -1;
    sftp_session sf = get_sftp(s, se, err);
    int rc = sf ? 0 : -1;
    sl_buf chmod;
    sl_buf_init(&chmod, 0);
    sl_buf_adds(&chmod, "chmod -R a-w");
    for (size_t i = 0; !rc && i < o->n_binds; i++) {
        const sl_sandbox_bind *b = &o->binds[i];
        char *t = abs_path(s, b->target);
        rc = copy_tree(s, se, sf, b->host, t, 0, err);
        if (rc)
            sl_err_prefix(err, "sandbox bind %zu (%s -> %s)", i + 1, b->host, b->target);
        sl_buf_addc(&chmod, ' ');
        sq(&chmod, t);
        free(t);
    }
    int code = 0;
    sl_buf e;
    sl_buf_init(&e, 4096);
    if (!rc) {
        rc = run_script(s, se, chmod.data, NULL, &e, &code, 120, err);
        if (!rc && code)
            rc = sl_err_set(err, SL_EIO,
                            "sandbox bind: making the copies read-only failed: %s",
                            e.data ? e.data : "");
    }
    sl_buf_release(&e);
    sl_buf_release(&chmod);
    pthread_mutex_unlock(&se->mu);
    return rc;
}

/* ---- create / destroy ---- */

static void ssh_destroy(sl_sandbox *sb)
{
    ssh_sb *s = (ssh_sb *)sb;
    if (s->ws) {
        sl_err e = {0};
        sess *se = file_session(s, &e);
        if (se) {
            sl_buf b;
            sl_buf_init(&b, 0);
            pthread_mutex_lock(&s->pool_mu);
            size_t n = 0;
            unsigned ids[64];
            for (job *j = s->jobs; j && n < 64; j = j->next)
                ids[n++] = j->id;
            pthread_mutex_unlock(&s->pool_mu);
            add_kill(s, &b, ids, n, true);
            /* drop the final exit 0: the removal follows */
            b.len -= strlen("exit 0\n");
            b.data[b.len] = 0;
            sl_buf_adds(&b, "chmod -R u+w ");
            sq(&b, s->ws);
            sl_buf_adds(&b, " 2>/dev/null; rm -rf ");
            sq(&b, s->ws);
            sl_buf_addc(&b, ' ');
            sq(&b, s->ctl);
            sl_buf_addc(&b, '\n');
            run_script(s, se, b.data, NULL, NULL, NULL, 120, &e);
            sl_buf_release(&b);
            pthread_mutex_unlock(&se->mu);
        }
        sl_err_clear(&e);
    }
    for (int i = 0; i < s->n_sess; i++)
        sess_free(s->pool[i]);
    if (s->key)
        ssh_key_free(s->key);
    sl_secret_free(s->password);
    free(s->ws);
    free(s->ctl);
    free(s->host);
    free(s->user);
    free(s->base_path);
    free(s->fp_want);
    free(s->known_hosts);
    pthread_mutex_destroy(&s->pool_mu);
    free(s);
}

int sl_ssh_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err)
{
    *out = NULL;
    if (sl_dl_load(&ssh_lib, err))
        return sl_err_prefix(err, "ssh sandbox");
    bool vm_net = false;
    const char *key_text = NULL, *key_file = NULL, *pass = NULL;
    ssh_sb *s = sl_xcalloc(1, sizeof *s);
    s->base.ops = &ssh_ops;
    pthread_mutex_init(&s->pool_mu, NULL);
    if (parse_settings(s, o, &key_text, &key_file, &pass, &vm_net, err))
        goto fail;
    if (o->net != SL_NET_OPEN && !vm_net) {
        sl_err_set(err, SL_EUNSUPPORTED,
                   "sandbox provider 'ssh' cannot enforce network '%s'; set "
                   "sandbox.ssh.vm_enforces_network: true if the VM's own firewall does, or "
                   "use net open",
                   o->net == SL_NET_NONE ? "none" : "allow");
        goto fail;
    }
    for (size_t i = 0; i < o->n_binds; i++) {
        const sl_sandbox_bind *b = &o->binds[i];
        if (!b->host || !b->target || !b->target[0] || strstr(b->target, "..")) {
            sl_err_set(err, SL_EINVAL,
                       "sandbox bind %zu: the target must be a path without '..' (got '%s')",
                       i + 1, b->target ? b->target : "");
            goto fail;
        }
        if (access(b->host, R_OK)) {
            sl_err_set(err, SL_EINVAL, "sandbox bind: cannot read %s: %s",
                       b->host ? b->host : "", strerror(errno));
            goto fail;
        }
    }
    if (key_file || key_text) {
        int rc = key_file ? ssh_pki_import_privkey_file(key_file, pass, NULL, NULL, &s->key)
                          : ssh_pki_import_privkey_base64(key_text, pass, NULL, NULL, &s->key);
        if (rc != SSH_OK) {
            if (key_file && access(key_file, R_OK))
                sl_err_set(err, SL_EINVAL, "sandbox.ssh.private_key_file: cannot read %s: %s",
                           key_file, strerror(errno));
            else
                sl_err_set(err, SL_EINVAL,
                           "sandbox.ssh.%s: not a private key libssh can read (PEM or "
                           "OpenSSH format%s)",
                           key_file ? "private_key_file" : "private_key",
                           pass ? "; check private_key_passphrase"
                                : "; set private_key_passphrase if it is encrypted");
            goto fail;
        }
    }
    s->cpu_seconds = o->cpu_seconds;
    s->max_open_files = o->max_open_files;
    s->max_file_bytes = o->max_file_bytes;
    s->max_procs = o->max_procs;
    if (sl_rand_hex(s->id, (sizeof s->id - 1) / 2, err)) {
        sl_err_prefix(err, "sandbox");
        goto fail;
    }
    s->ws = sl_xasprintf("%s/%s", s->base_path, s->id);
    s->ctl = sl_xasprintf("%s/%s.ctl", s->base_path, s->id);

    /* The first connection, the folders, and what the VM is like: the
     * user's uid (RLIMIT_NPROC counts all of that user's processes, and
     * root ignores it) and whether sshd makes each command a process
     * group leader (OpenSSH does; others may need setsid). */
    sess *se = file_session(s, err);
    if (!se)
        goto fail_nows;
    sl_buf b, sout, eout;
    sl_buf_init(&b, 0);
    sl_buf_init(&sout, 4096);
    sl_buf_init(&eout, 4096);
    sl_buf_adds(&b, "mkdir -p ");
    sq(&b, s->base_path);
    sl_buf_adds(&b, " && mkdir -m 700 ");
    sq(&b, s->ws);
    sl_buf_addc(&b, ' ');
    sq(&b, s->ctl);
    sl_buf_adds(&b, " || exit 3\n"
                    "echo \"$$ $(ps -o pgid= -p $$ 2>/dev/null | tr -d ' ') $(id -u) "
                    "$(command -v setsid)\"\n");
    int code = -1;
    int rc = run_script(s, se, b.data, &sout, &eout, &code, 60, err);
    pthread_mutex_unlock(&se->mu);
    sl_buf_release(&b);
    long pid = 0, pgid = 0, uid = -1;
    char setsid_path[256] = "";
    if (!rc && (code != 0 || sscanf(sout.data ? sout.data : "", "%ld %ld %ld %255s", &pid, &pgid,
                                    &uid, setsid_path) < 3)) {
        /* "pid uid" when ps printed nothing */
        if (!code && sscanf(sout.data ? sout.data : "", "%ld %ld", &pid, &uid) == 2) {
            pgid = pid;
        } else {
            char *e = eout.data ? eout.data : (char *)"";
            e[strcspn(e, "\n")] = 0;
            sl_err_set(err, SL_EIO,
                       "sandbox: cannot make the sandbox folder %s on %s (exit %d: %s); check "
                       "sandbox.ssh.base_path and that the login shell is sh-compatible",
                       s->ws, s->host, code, e);
            rc = -1;
        }
    }
    sl_buf_release(&sout);
    sl_buf_release(&eout);
    if (rc)
        goto fail_nows;
    s->use_setsid = pgid != pid && setsid_path[0];
    /* RLIMIT_NPROC counts every process of the uid on the VM, and root
     * ignores it; it is set only for a non-root user. */
    s->limit_procs = o->max_procs > 0 && uid != 0;
    s->base.workspace = s->ws;
    if (copy_binds(s, o, err))
        goto fail;
    *out = &s->base;
    return 0;
fail_nows:
    free(s->ws);
    s->ws = NULL;
fail:
    ssh_destroy(&s->base);
    return -1;
}

const char *sl_ssh_host_fingerprint(const sl_sandbox *sb)
{
    if (!sb || sb->ops != &ssh_ops)
        return NULL;
    return ((const ssh_sb *)sb)->fp;
}

static const sl_sandbox_ops ssh_ops = {
    .name = "ssh",
    .exec = ssh_exec,
    .kill = ssh_kill,
    .upload = ssh_upload,
    .download = ssh_download,
    .list = ssh_list,
    .destroy = ssh_destroy,
};
