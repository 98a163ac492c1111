/*
 * hnsw_shim — hnswlib behind a C interface (hnsw_shim.h).  Built alone as
 * a shared object (see the Makefile); every entry point catches every C++
 * exception and turns it into -1 and a message.
 */
#include "knowledge/hnsw_shim.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <hnswlib/hnswlib.h>

#define SL_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Param {
    float *const *base;
    size_t dims;
    sl_hnsw_dot_fn dot;
};

inline const float *resolve(const void *handle, const Param *p)
{
    uint64_t v;
    std::memcpy(&v, handle, sizeof v);
    if (v & SL_HNSW_ROW)
        return *p->base + (v & ~SL_HNSW_ROW) * p->dims;
    return reinterpret_cast<const float *>(static_cast<uintptr_t>(v));
}

float cosine_distance(const void *a, const void *b, const void *param)
{
    const Param *p = static_cast<const Param *>(param);
    return 1.0f - p->dot(resolve(a, p), resolve(b, p), p->dims);
}

/* hnswlib's space, with 8-byte handles for data (the header says why). */
class HandleSpace : public hnswlib::SpaceInterface<float> {
public:
    Param param;
    size_t get_data_size() override { return sizeof(uint64_t); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return cosine_distance; }
    void *get_dist_func_param() override { return &param; }
};

void say(char *msg, size_t msglen, const char *what, const char *why)
{
    if (msg && msglen)
        std::snprintf(msg, msglen, "%s: %s", what, why);
}

} // namespace

struct sl_hnsw {
    HandleSpace space;
    hnswlib::HierarchicalNSW<float> *g = nullptr;
    ~sl_hnsw() { delete g; }
};

#define GUARD(doing)                                                                       \
    catch (const std::bad_alloc &) {                                                      \
        say(msg, msglen, doing, "out of memory");                                          \
    }                                                                                     \
    catch (const std::exception &e) {                                                     \
        say(msg, msglen, doing, e.what());                                                 \
    }                                                                                     \
    catch (...) {                                                                         \
        say(msg, msglen, doing, "unknown C++ exception");                                 \
    }

SL_EXPORT sl_hnsw *sl_hnsw_new(size_t dims, float *const *base, sl_hnsw_dot_fn dot,
                               size_t max_elements, size_t m, size_t ef_construction, char *msg,
                               size_t msglen)
{
    sl_hnsw *h = nullptr;
    try {
        h = new sl_hnsw;
        h->space.param = Param{base, dims, dot};
        h->g = new hnswlib::HierarchicalNSW<float>(&h->space, max_elements ? max_elements : 1, m,
                                                   ef_construction, 100);
        return h;
    }
    GUARD("making the HNSW graph")
    delete h;
    return nullptr;
}

SL_EXPORT void sl_hnsw_free(sl_hnsw *h)
{
    try {
        delete h;
    } catch (...) {
    }
}

SL_EXPORT int sl_hnsw_add_range(sl_hnsw *h, uint64_t first, size_t n, int threads, char *msg,
                                size_t msglen)
{
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex why_lock;
    std::string why;
    auto work = [&]() {
        try {
            for (;;) {
                size_t i = next.fetch_add(1);
                if (i >= n || failed.load())
                    return;
                uint64_t handle = SL_HNSW_ROW | (first + i);
                h->g->addPoint(&handle, static_cast<hnswlib::labeltype>(first + i));
            }
        } catch (const std::exception &e) {
            std::lock_guard<std::mutex> l(why_lock);
            if (!failed.exchange(true))
                why = e.what();
        } catch (...) {
            std::lock_guard<std::mutex> l(why_lock);
            if (!failed.exchange(true))
                why = "unknown C++ exception";
        }
    };
    try {
        if (n == 0)
            return 0;
        /* The first element alone: it makes the entry point. */
        next = 1;
        uint64_t handle = SL_HNSW_ROW | first;
        h->g->addPoint(&handle, static_cast<hnswlib::labeltype>(first));
        std::vector<std::thread> pool;
        /* A thread that cannot start leaves the work to the others: an
         * exception here with threads running would end the process
         * (their std::thread destructors call std::terminate). */
        for (int t = 1; t < threads && (size_t)t < n; t++) {
            try {
                pool.emplace_back(work);
            } catch (...) {
                break;
            }
        }
        work();
        for (auto &t : pool)
            t.join();
        if (failed) {
            say(msg, msglen, "building the HNSW graph", why.c_str());
            return -1;
        }
        return 0;
    }
    GUARD("building the HNSW graph")
    return -1;
}

SL_EXPORT void sl_hnsw_set_ef(sl_hnsw *h, size_t ef)
{
    h->g->setEf(ef);
}

SL_EXPORT int sl_hnsw_mark_deleted(sl_hnsw *h, uint64_t slot, char *msg, size_t msglen)
{
    try {
        h->g->markDelete(static_cast<hnswlib::labeltype>(slot));
        return 0;
    }
    GUARD("deleting from the HNSW graph")
    return -1;
}

SL_EXPORT int sl_hnsw_search(const sl_hnsw *h, const float *q, size_t k, uint64_t *slots,
                             float *dists, size_t *n, char *msg, size_t msglen)
{
    try {
        uint64_t handle = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(q));
        auto top = h->g->searchKnn(&handle, k);
        size_t got = top.size();
        *n = got;
        while (!top.empty()) { /* farthest first */
            got--;
            slots[got] = top.top().second;
            dists[got] = top.top().first;
            top.pop();
        }
        return 0;
    }
    GUARD("searching the HNSW graph")
    *n = 0;
    return -1;
}

SL_EXPORT size_t sl_hnsw_count(const sl_hnsw *h)
{
    return h->g->cur_element_count;
}

SL_EXPORT void sl_hnsw_params(const sl_hnsw *h, size_t *m, size_t *ef_construction, int *maxlevel,
                              uint32_t *enterpoint)
{
    *m = h->g->M_;
    *ef_construction = h->g->ef_construction_;
    *maxlevel = h->g->maxlevel_;
    *enterpoint = h->g->enterpoint_node_;
}

SL_EXPORT void sl_hnsw_element(const sl_hnsw *h, uint32_t i, uint64_t *slot, int *level)
{
    *slot = h->g->getExternalLabel(i);
    *level = h->g->element_levels_[i];
}

SL_EXPORT const uint32_t *sl_hnsw_links(const sl_hnsw *h, uint32_t i, int level, uint32_t *count)
{
    hnswlib::linklistsizeint *ll = h->g->get_linklist_at_level(i, level);
    *count = h->g->getListCount(ll);
    return reinterpret_cast<const uint32_t *>(ll + 1);
}

SL_EXPORT int sl_hnsw_restore(sl_hnsw *h, size_t n, const uint64_t *labels, const uint8_t *levels,
                              const uint32_t *links, const size_t *off, const uint8_t *deleted,
                              int maxlevel, uint32_t enterpoint, char *msg, size_t msglen)
{
    try {
        hnswlib::HierarchicalNSW<float> *g = h->g;
        if (g->cur_element_count != 0 || g->max_elements_ < n)
            throw std::runtime_error("the graph to fill is not a new one of the right size");
        std::memset(g->data_level0_memory_, 0, n * g->size_data_per_element_);
        for (size_t i = 0; i < n; i++) {
            const uint32_t *p = links + off[i];
            int top = levels[i];
            char *base = g->data_level0_memory_ + i * g->size_data_per_element_;
            uint64_t handle = SL_HNSW_ROW | labels[i];
            std::memcpy(base + g->offsetData_, &handle, sizeof handle);
            hnswlib::labeltype label = static_cast<hnswlib::labeltype>(labels[i]);
            std::memcpy(base + g->label_offset_, &label, sizeof label);
            g->element_levels_[i] = 0;
            g->linkLists_[i] = nullptr;
            if (top > 0) {
                size_t sz = g->size_links_per_element_ * (size_t)top;
                g->linkLists_[i] = static_cast<char *>(std::malloc(sz));
                if (!g->linkLists_[i])
                    throw std::bad_alloc();
                std::memset(g->linkLists_[i], 0, sz);
                g->element_levels_[i] = top;
            }
            /* Counted in as soon as its lists are its own: the destructor
             * frees the first cur_element_count elements' lists. */
            g->cur_element_count = i + 1;
            for (int l = 0; l <= top; l++) {
                uint32_t cnt = *p++;
                hnswlib::linklistsizeint *ll = g->get_linklist_at_level((hnswlib::tableint)i, l);
                g->setListCount(ll, (unsigned short)cnt);
                std::memcpy(ll + 1, p, cnt * sizeof(uint32_t));
                p += cnt;
            }
            g->label_lookup_[label] = (hnswlib::tableint)i;
        }
        g->maxlevel_ = n ? maxlevel : -1;
        g->enterpoint_node_ = n ? enterpoint : (hnswlib::tableint)-1;
        for (size_t i = 0; i < n; i++)
            if (deleted[i])
                g->markDeletedInternal((hnswlib::tableint)i);
        return 0;
    }
    GUARD("loading the HNSW graph")
    return -1;
}
