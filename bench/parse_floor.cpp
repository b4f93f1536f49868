// The parse floor (docs/performance.md "The parse against simdjson"): what the
// fastest JSON parser there is costs on the same trace, on this machine, doing
// less than neuron-stats must. Not part of the tool; bench/hta_bench.py builds it
// when g++ and libsimdjson-dev are installed.
//
//   parse_floor TRACE|- [THREADS]      (THREADS: default 2)
//
// It reads the trace in parts of about 2 MiB, cut before an element of
// traceEvents (at `}` `,` `{`, whitespace allowed between, where neuron-stats
// cuts a file for its two threads), and THREADS threads walk the parts with simdjson's On Demand
// API: every field of every event, its key unescaped, "name" and "cat"
// unescaped, "ts" and "dur" converted to doubles, the keys of "args" unescaped
// and their values taken as raw tokens. What it does not do, and neuron-stats
// does: exact integer nanoseconds, interning, the events kept, the checks and
// messages of bad input, the aggregation. It prints the events it walked.
//
// A cut inside a string (the three bytes in a name) fails the part's parse:
// the probe then says so and exits 1 (none of the benchmark traces has one).

#include <simdjson.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

constexpr size_t kPartBytes = 2u << 20; // (16 MiB parts cost about 30% more: a larger index to fault in)

// One reader over the file, shared by the threads under a lock: each call
// hands out the next part, from after traceEvents' '[' to its ']'.
class Parts {
public:
	explicit Parts(int fd) : fd_(fd) { buf_.reserve(4 * kPartBytes); }

	// The next part, as "[" elements "]" in *out; false at the end.
	bool next(std::string *out, std::string *why)
	{
		std::lock_guard<std::mutex> hold(lock_);
		if (done_)
			return false;
		while (!eof_ && buf_.size() - pos_ < kPartBytes + 4096)
			fill();
		if (!started_ && !start(why))
			return false;
		size_t cut;
		while ((cut = eof_ ? array_end() : boundary(pos_ + kPartBytes)) == std::string::npos && !eof_)
			fill(); // (an element longer than what is buffered)
		if (cut == std::string::npos) {
			*why = "no ']' ends traceEvents";
			done_ = true;
			return false;
		}
		out->assign("[");
		out->append(buf_, pos_, cut - pos_);
		out->append("]");
		done_ = eof_;
		pos_ = cut + 1; // (past the ',')
		return true;
	}

private:
	void fill()
	{
		buf_.erase(0, pos_);
		pos_ = 0;
		size_t have = buf_.size(), want = have + kPartBytes;
		buf_.resize(want);
		while (have < want) { // (a pipe gives 64 KiB a read)
			ssize_t got = read(fd_, &buf_[have], want - have);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				eof_ = true;
				break;
			}
			have += (size_t)got;
		}
		buf_.resize(have);
	}

	bool start(std::string *why)
	{
		size_t key;
		while ((key = buf_.find("\"traceEvents\"")) == std::string::npos && !eof_)
			fill();
		size_t open = key == std::string::npos ? key : buf_.find('[', key);
		if (open == std::string::npos) {
			*why = "no traceEvents";
			done_ = true;
			return false;
		}
		pos_ = open + 1;
		started_ = true;
		return true;
	}

	static bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

	// The ',' of the first `}` `,` `{` at or after `from`, or npos.
	size_t boundary(size_t from) const
	{
		for (size_t i = buf_.find('}', from); i != std::string::npos; i = buf_.find('}', i + 1)) {
			size_t j = i + 1;
			while (j < buf_.size() && space(buf_[j]))
				j++;
			if (j >= buf_.size() || buf_[j] != ',')
				continue;
			size_t k = j + 1;
			while (k < buf_.size() && space(buf_[k]))
				k++;
			if (k < buf_.size() && buf_[k] == '{')
				return j;
		}
		return std::string::npos;
	}

	// traceEvents' ']' once the whole rest is read: the last ']' (Kineto
	// writes no array after traceEvents).
	size_t array_end() const
	{
		size_t i = buf_.rfind(']');
		return i == std::string::npos || i < pos_ ? std::string::npos : i;
	}

	int fd_;
	std::mutex lock_;
	std::string buf_;
	size_t pos_ = 0;
	bool eof_ = false, started_ = false, done_ = false;
};

struct Walked {
	uint64_t events = 0, sum = 0; // (sum: so that nothing is optimized away)
	std::string error;
};

void walk(Parts *parts, Walked *w)
{
	simdjson::ondemand::parser parser; // (sized by the first part)
	std::string part;
	part.reserve(4 * kPartBytes); // (reused: no allocation a part)
	while (parts->next(&part, &w->error)) {
		part.reserve(part.size() + simdjson::SIMDJSON_PADDING);
		auto doc = parser.iterate(part.data(), part.size(), part.capacity());
		simdjson::ondemand::array events;
		if (doc.get_array().get(events)) {
			w->error = "a part is not an array";
			return;
		}
		for (auto element : events) {
			simdjson::ondemand::object event;
			if (element.get_object().get(event)) {
				w->error = "an element is not an object (a cut inside a string?)";
				return;
			}
			w->events++;
			for (auto field : event) {
				std::string_view key = field.unescaped_key();
				simdjson::ondemand::value v = field.value();
				if (key == "ts" || key == "dur") {
					double d;
					if (!v.get_double().get(d))
						w->sum += (uint64_t)d;
				} else if (key == "name" || key == "cat") {
					std::string_view s;
					if (!v.get_string().get(s))
						w->sum += s.size();
				} else if (key == "args") {
					simdjson::ondemand::object args;
					if (v.get_object().get(args))
						continue;
					for (auto arg : args) {
						w->sum += arg.unescaped_key().value().size();
						w->sum += arg.value().raw_json_token().value().size();
					}
				} else {
					w->sum += v.raw_json_token().size();
				}
			}
		}
	}
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: parse_floor TRACE|- [THREADS]\n");
		return 2;
	}
	int fd = strcmp(argv[1], "-") == 0 ? 0 : open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "parse_floor: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	int n = argc > 2 ? atoi(argv[2]) : 2;
	Parts parts(fd);
	std::vector<Walked> walked(n < 1 ? 1 : n);
	std::vector<std::thread> threads;
	for (size_t i = 1; i < walked.size(); i++)
		threads.emplace_back(walk, &parts, &walked[i]);
	walk(&parts, &walked[0]);
	for (auto &t : threads)
		t.join();
	uint64_t events = 0, sum = 0;
	for (const auto &w : walked) {
		if (!w.error.empty()) {
			fprintf(stderr, "parse_floor: %s: %s\n", argv[1], w.error.c_str());
			return 1;
		}
		events += w.events;
		sum += w.sum;
	}
	printf("%llu events (%llu)\n", (unsigned long long)events, (unsigned long long)sum);
	return 0;
}
