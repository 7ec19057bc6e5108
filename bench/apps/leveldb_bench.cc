// numalock-leveldb-bench: the LevelDB experiment of the CNA and ShflLock
// papers (db_bench readrandom; Debian's libleveldb-dev ships no db_bench).
//
//   numalock-leveldb-bench readrandom|readwhilewriting [--threads T]
//       [--duration S] [--keys N] [--db DIR]
//
// The database at DIR (default: $TMPDIR/numalock-leveldb-N) is filled with N
// keys of 100-byte values and compacted when it lacks its marker file, then
// reused: a run's figure never includes the fill. readrandom: T threads get
// random existing keys for S seconds. readwhilewriting: the same T readers
// and one more thread that overwrites random keys meanwhile (db_bench's
// definition: only the readers' operations are counted). Prints
//   BENCH: X ops/s (T threads, S s, N keys, F found)
// and exits 1 when a key that must exist was not found.
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <sys/stat.h>

namespace {

constexpr int kValueBytes = 100; // db_bench's default value size

struct Options {
    std::string bench;
    int threads = 1;
    double duration = 1.0;
    long keys = 100000;
    std::string db;
};

[[noreturn]] void fail(const std::string &msg)
{
    std::fprintf(stderr, "numalock-leveldb-bench: %s\n", msg.c_str());
    std::exit(2);
}

void usage(FILE *f)
{
    std::fprintf(f, "usage: numalock-leveldb-bench readrandom|readwhilewriting [--threads T] [--duration S] "
                    "[--keys N] [--db DIR]\n");
}

Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            usage(stdout);
            std::exit(0);
        }
        auto value = [&](const char *name) -> std::string {
            if (i + 1 >= argc)
                fail(std::string("option ") + name + " needs a value");
            return argv[++i];
        };
        char *end = nullptr;
        if (a == "--threads") {
            std::string v = value("--threads");
            long t = std::strtol(v.c_str(), &end, 10);
            if (*end || t < 1 || t > 1024)
                fail("bad thread count '" + v + "': give a whole number from 1 to 1024");
            o.threads = int(t);
        } else if (a == "--duration") {
            std::string v = value("--duration");
            double d = std::strtod(v.c_str(), &end);
            if (*end || !(d > 0 && d <= 3600))
                fail("bad duration '" + v + "': give seconds above 0 and at most 3600");
            o.duration = d;
        } else if (a == "--keys") {
            std::string v = value("--keys");
            long n = std::strtol(v.c_str(), &end, 10);
            if (*end || n < 1 || n > 100000000)
                fail("bad key count '" + v + "': give a whole number from 1 to 100000000");
            o.keys = n;
        } else if (a == "--db") {
            o.db = value("--db");
        } else if (a[0] != '-' && o.bench.empty()) {
            o.bench = a;
        } else {
            fail("unknown argument '" + a + "': the benchmarks are readrandom and readwhilewriting, the options "
                 "--threads, --duration, --keys and --db");
        }
    }
    if (o.bench != "readrandom" && o.bench != "readwhilewriting")
        fail(o.bench.empty() ? std::string("no benchmark given: give readrandom or readwhilewriting")
                             : "unknown benchmark '" + o.bench + "': give readrandom or readwhilewriting");
    if (o.db.empty()) {
        const char *tmp = std::getenv("TMPDIR");
        o.db = std::string(tmp && *tmp ? tmp : "/tmp") + "/numalock-leveldb-" + std::to_string(o.keys);
    }
    return o;
}

// db_bench's key format: 16 decimal digits
void make_key(long k, char buf[17])
{
    std::snprintf(buf, 17, "%016ld", k);
}

// xorshift64*: per-thread, no shared state between readers
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
    uint64_t next()
    {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 2685821657736338717ull;
    }
};

bool exists(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

// Fills the database once; the marker is written last, so a fill that was
// interrupted is redone by the next run.
void fill_if_needed(leveldb::DB *db, const Options &o)
{
    std::string marker = o.db + "/NUMALOCK-FILLED";
    if (exists(marker))
        return;
    std::string value(kValueBytes, 'v');
    char key[17];
    leveldb::WriteBatch batch;
    for (long k = 0; k < o.keys; k++) {
        make_key(k, key);
        batch.Put(leveldb::Slice(key, 16), value);
        if (batch.ApproximateSize() > (1 << 20) || k + 1 == o.keys) {
            leveldb::Status s = db->Write(leveldb::WriteOptions(), &batch);
            if (!s.ok())
                fail("filling " + o.db + " failed: " + s.ToString());
            batch.Clear();
        }
    }
    db->CompactRange(nullptr, nullptr);
    FILE *f = std::fopen(marker.c_str(), "w");
    if (!f || std::fclose(f) != 0)
        fail("cannot write " + marker);
}

} // namespace

int main(int argc, char **argv)
{
    Options o = parse(argc, argv);
    leveldb::Options dbo;
    dbo.create_if_missing = true;
    leveldb::DB *raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(dbo, o.db, &raw);
    if (!s.ok())
        fail("cannot open the database " + o.db + ": " + s.ToString());
    std::unique_ptr<leveldb::DB> db(raw);
    fill_if_needed(db.get(), o);

    std::atomic<bool> stop{false};
    std::atomic<long> missing{0};
    std::vector<long> ops(size_t(o.threads), 0);
    std::vector<std::thread> workers;
    auto reader = [&](int id) {
        Rng rng(uint64_t(id) + 1);
        std::string value;
        char key[17];
        long n = 0, miss = 0;
        leveldb::ReadOptions ro;
        while (!stop.load(std::memory_order_relaxed)) {
            make_key(long(rng.next() % uint64_t(o.keys)), key);
            if (!db->Get(ro, leveldb::Slice(key, 16), &value).ok())
                miss++;
            n++;
        }
        ops[size_t(id)] = n;
        missing += miss;
    };
    auto writer = [&] {
        Rng rng(uint64_t(o.threads) + 1000);
        std::string value(kValueBytes, 'w');
        char key[17];
        while (!stop.load(std::memory_order_relaxed)) {
            make_key(long(rng.next() % uint64_t(o.keys)), key);
            leveldb::Status ws = db->Put(leveldb::WriteOptions(), leveldb::Slice(key, 16), value);
            if (!ws.ok())
                fail("a write failed: " + ws.ToString());
        }
    };
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.threads; i++)
        workers.emplace_back(reader, i);
    std::thread w;
    if (o.bench == "readwhilewriting")
        w = std::thread(writer);
    std::this_thread::sleep_for(std::chrono::duration<double>(o.duration));
    stop = true;
    for (auto &t : workers)
        t.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (w.joinable())
        w.join();
    long total = 0;
    for (long n : ops)
        total += n;
    std::printf("%s: %.0f ops/s (%d threads, %.2f s, %ld keys, %ld found)\n", o.bench.c_str(), total / secs,
                o.threads, secs, o.keys, total - missing.load());
    if (missing.load()) {
        std::fprintf(stderr, "numalock-leveldb-bench: %ld of %ld reads did not find their key\n", missing.load(),
                     total);
        return 1;
    }
    return 0;
}
