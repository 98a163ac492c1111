/*
 * skills — Agent Skills (agentskills.io) found in an app's `skills/` folder.
 *
 * A skill is a folder `skills/<name>/` holding a SKILL.md: YAML frontmatter
 * between two `---` lines, then Markdown instructions.  The loader reads
 * only the frontmatter (name, description and the optional fields) and
 * builds the catalog that goes into the agent's system prompt; the model
 * reads SKILL.md itself, at `location` inside the sandbox, when a task
 * matches (progressive disclosure).
 *
 * Loading is lenient, as the spec's client guide asks: a skill whose name
 * breaks the naming rules, differs from its folder or runs long still
 * loads, with a warning; a skill with no description, no frontmatter or
 * frontmatter that is not YAML is skipped, with a warning that says why
 * and what to change.  Warnings never fail the load; only an unreadable
 * skills folder does.
 *
 * Bounds: SKILL.md is read up to 1 MiB (the frontmatter must end inside
 * it), at most 200 skills load, at most 4096 folder entries are looked at,
 * descriptions past 1024 characters are cut.  Symbolic links (a skill
 * folder or a SKILL.md that is a link) are refused, so a skill cannot point
 * the loader outside the skills folder.
 *
 * Ownership: an sl_skills owns everything in it (strings, metadata
 * objects) until sl_skills_release().  Errors come back through sl_err
 * (core/err.h).
 */
#ifndef SL_AGENT_SKILLS_H
#define SL_AGENT_SKILLS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

#define SL_SKILLS_MAX 200                  /* skills loaded from one folder */
#define SL_SKILLS_MAX_ENTRIES 4096         /* folder entries looked at */
#define SL_SKILLS_READ_CAP ((size_t)1 << 20) /* bytes of SKILL.md read */
#define SL_SKILLS_NAME_MAX 64              /* characters, per the spec */
#define SL_SKILLS_DESCRIPTION_MAX 1024
#define SL_SKILLS_COMPATIBILITY_MAX 500

typedef struct {
    char *name;          /* from the frontmatter (the folder's when absent) */
    char *description;   /* at most SL_SKILLS_DESCRIPTION_MAX characters */
    char *license;       /* optional fields: NULL when absent */
    char *compatibility;
    char *allowed_tools; /* space-separated (a YAML list is joined) */
    sl_value *metadata;  /* object of strings, or NULL */
    char *folder;        /* the folder under skills_dir (loader only) */
    char *location;      /* SKILL.md as the agent sees it (loader only) */
    char **notes;        /* warnings found while parsing (reasons) */
    size_t nnotes;
} sl_skill;

typedef struct {
    char *folder;        /* the skill folder ("" for the skills folder itself) */
    char *path;          /* host path of the SKILL.md (or folder) concerned */
    char *reason;        /* what is wrong and what to do */
    bool skipped;        /* the skill did not load */
} sl_skill_warning;

typedef struct {
    sl_skill *v;         /* sorted by name; names are unique */
    size_t n;
    sl_skill_warning *warnings; /* in folder order */
    size_t nwarnings;
} sl_skills;

/* Loads every skills_dir/<folder>/SKILL.md (folders in byte order; hidden
 * ones, files and folders without SKILL.md are passed over).  A missing
 * skills_dir (or NULL) means no skills.  location = sandbox_dir + "/" +
 * folder + "/SKILL.md" (skills_dir when sandbox_dir is NULL).  When two
 * folders give the same name, the first folder wins and the other is
 * skipped with a warning.  `out` is always initialised (release it either
 * way); -1 only when skills_dir exists but cannot be read. */
int sl_skills_load(const char *skills_dir, const char *sandbox_dir, sl_skills *out, sl_err *err);

/* Parses one SKILL.md (text need not be NUL-terminated; a BOM and CRLF line
 * ends are fine).  folder, when not NULL, is checked against the name and
 * stands in for a missing one.  0: usable, `out` filled (folder and
 * location left NULL), out->notes holds the warnings.  -1: the skill is
 * skipped, err says why (SL_EPARSE) and out is empty.  Release `out` with
 * sl_skill_release() in both cases. */
int sl_skills_parse(const char *text, size_t len, const char *folder, sl_skill *out, sl_err *err);
void sl_skill_release(sl_skill *sk);

/* The skill called `name`, or NULL (borrowed). */
const sl_skill *sl_skills_find(const sl_skills *s, const char *name);

/* Appends the system-prompt section: a short instruction on using skills,
 * then <available_skills> with <skill><name/><description/><location/>
 * per skill, text XML-escaped.  Appends nothing when there are no skills. */
void sl_skills_catalog(const sl_skills *s, sl_buf *out);

/* The warnings as a JSON array of {folder, path, reason, skipped, message},
 * message being "PATH: skipped: REASON" or "PATH: REASON" (new reference). */
sl_value *sl_skills_warnings(const sl_skills *s);

void sl_skills_release(sl_skills *s);

#endif
