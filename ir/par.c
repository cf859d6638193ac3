/* par.c - fork-join of one side job (see par.h): one GLib pool thread, made on first use, kept
 * for the life of the process. One side thread, because a job splits its work in two halves. */
#include "ir/par.h"

static GThreadPool *pool;
static _Thread_local bool on_side; /* this thread is the side thread: no job of its own */
static gint allowed = 1;           /* fp_par_allow */
static guint side_jobs;            /* fp_par_side_jobs */
static gint busy;                  /* jobs pushed to the side thread and not finished there */

static void side_main(gpointer data, gpointer user_data)
{
    (void)user_data;
    fp_par_job *j = data;
    on_side = true;
    g_atomic_int_inc(&side_jobs);
    j->fn(j->arg);
    g_atomic_int_add(&busy, -1);
    g_mutex_lock(&j->lock);
    j->done = true;
    g_cond_signal(&j->cond);
    g_mutex_unlock(&j->lock);
}

/* The pool, or NULL when the process has one core or no thread can be made (then jobs run on the
 * caller's thread). */
static GThreadPool *side_pool(void)
{
    static gsize once;
    if (g_once_init_enter(&once)) {
        if (g_get_num_processors() > 1)
            pool = g_thread_pool_new(side_main, NULL, 1, FALSE, NULL);
        g_once_init_leave(&once, 1);
    }
    return pool;
}

/* Whether a side job can run now: fp_par_worth without the size. Not while the side thread runs
 * one: a job pushed behind it would wait for it, and so would its caller at the join, where the
 * caller could have done the work itself. */
static bool available(void)
{
    return !on_side && g_atomic_int_get(&allowed) && !g_atomic_int_get(&busy) && g_get_num_processors() > 1;
}

bool fp_par_worth(size_t n) { return n >= FP_PAR_MIN_NODES && available(); }

void fp_par_allow(bool allow) { g_atomic_int_set(&allowed, allow); }

unsigned fp_par_side_jobs(void) { return g_atomic_int_get(&side_jobs); }

void fp_par_start(fp_par_job *j, void (*fn)(void *arg), void *arg, bool split)
{
    *j = (fp_par_job){.fn = fn, .arg = arg};
    GThreadPool *p = split && available() ? side_pool() : NULL;
    if (p) {
        g_mutex_init(&j->lock);
        g_cond_init(&j->cond);
        j->side = true;
        g_atomic_int_inc(&busy);
        if (g_thread_pool_push(p, j, NULL))
            return;
        g_atomic_int_add(&busy, -1);
        g_mutex_clear(&j->lock);
        g_cond_clear(&j->cond);
        j->side = false;
    }
    fn(arg);
    j->done = true;
}

void fp_par_join(fp_par_job *j)
{
    if (!j->side)
        return;
    g_mutex_lock(&j->lock);
    while (!j->done)
        g_cond_wait(&j->cond, &j->lock);
    g_mutex_unlock(&j->lock);
    g_mutex_clear(&j->lock);
    g_cond_clear(&j->cond);
    j->side = false;
}

typedef struct {
    void (*fn)(void *arg, int h, size_t from, size_t to);
    void *arg;
    size_t from, to;
} half_job;

static void run_half(void *arg)
{
    half_job *h = arg;
    h->fn(h->arg, 1, h->from, h->to);
}

void fp_par_halves(size_t n, size_t worth, void (*fn)(void *arg, int h, size_t from, size_t to), void *arg)
{
    half_job second = {fn, arg, n / 2, n};
    fp_par_job job;
    fp_par_start(&job, run_half, &second, fp_par_worth(worth));
    fn(arg, 0, 0, n / 2);
    fp_par_join(&job);
}
