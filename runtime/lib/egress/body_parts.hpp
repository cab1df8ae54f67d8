// SPDX-License-Identifier: Apache-2.0
// The parts of a bulk HTTP/1.1 body on their way through the proxy (http_relay.hpp): read from one side into a
// few buffers on one thread while the buffers read before are written to the other side on another, so the
// reading (a socket read, decryption, parsing) and the writing (encryption, a socket write, which on loopback
// also runs the reader's receive path) overlap rather than take turns.
#pragma once

#include "egress/secret_scrub.hpp"
#include "egress/tls_stream.hpp"

#include <array>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

namespace cerberus::egress {

// Buffers passed from a reading thread to a writing one, in order.
class PartQueue {
public:
    static constexpr size_t part_size = 64 * 1024;
    static constexpr size_t parts = 4;

    // A part as read: bytes, whether the body ends with it, whether reading failed instead.
    struct Part {
        char* data = nullptr;
        size_t size = 0;
        bool last = false;
        bool failed = false;
    };

    // The reader's side: the next free buffer (waiting for one), nullptr once the writer stopped.
    char* free_buffer();
    // The reader's side: the buffer free_buffer() gave, filled.
    void filled(const Part& part);
    // The writer's side: the next part read (waiting for it).
    Part next();
    // The writer's side: the buffer of the part next() gave is written; the reader may fill it again.
    void written();
    // The writer's side: no more parts will be taken; a reader waiting for a buffer is woken.
    void stop();

private:
    std::array<std::array<char, part_size>, parts> buffers_;
    std::array<Part, parts> read_;
    size_t filled_count_ = 0; // parts read, in total
    size_t written_count_ = 0; // parts written, in total
    bool stopped_ = false;
    std::mutex mutex_;
    std::condition_variable changed_;
};

// Writes a body's parts as they are (a body framed by Content-Length) or as HTTP/1.1 chunks, through a scrub
// when there is one (which keeps lengths).
class PartWriter {
public:
    PartWriter(TlsStream& output, bool chunked, SecretScrub* scrub) : output_(output), chunked_(chunked), scrub_(scrub)
    {
    }
    // Writes a part; whether it went.
    bool write(std::string_view part);
    // Writes what the scrub held back and, chunked, the last chunk; whether it went.
    bool finish();

private:
    bool send(std::string_view bytes);

    TlsStream& output_;
    bool chunked_;
    SecretScrub* scrub_;
};

} // namespace cerberus::egress
