// SPDX-License-Identifier: Apache-2.0
// The device filter program, run through a small interpreter of the few
// instructions it uses; loading it in the kernel is in test_cgroup_host.cpp.
#include "base/error.hpp"
#include "cgroup/device_filter.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>

using namespace cerberus;
using namespace cerberus::cgroups;

namespace {

enum : uint32_t { mk = BPF_DEVCG_ACC_MKNOD, rd = BPF_DEVCG_ACC_READ, wr = BPF_DEVCG_ACC_WRITE };
enum : uint32_t { block = BPF_DEVCG_DEV_BLOCK, chr = BPF_DEVCG_DEV_CHAR };

// Runs program on one request; throws on anything the generator should not emit.
int run(const std::vector<bpf_insn>& program, uint32_t type, uint32_t access, uint32_t major, uint32_t minor)
{
    bpf_cgroup_dev_ctx ctx{access << 16 | type, major, minor};
    uint64_t reg[11] = {};
    size_t pc = 0;
    while (pc < program.size()) {
        const bpf_insn& insn = program[pc++];
        uint64_t& dst = reg[insn.dst_reg];
        switch (insn.code) {
        case BPF_LDX | BPF_MEM | BPF_W: {
            REQUIRE(insn.src_reg == BPF_REG_1);
            REQUIRE(insn.off + 4 <= static_cast<int>(sizeof ctx));
            uint32_t value;
            std::memcpy(&value, reinterpret_cast<const char*>(&ctx) + insn.off, 4);
            dst = value;
            break;
        }
        case BPF_ALU | BPF_AND | BPF_K: dst = static_cast<uint32_t>(dst) & static_cast<uint32_t>(insn.imm); break;
        case BPF_ALU | BPF_RSH | BPF_K: dst = static_cast<uint32_t>(dst) >> insn.imm; break;
        case BPF_ALU | BPF_MOV | BPF_X: dst = static_cast<uint32_t>(reg[insn.src_reg]); break;
        case BPF_ALU64 | BPF_MOV | BPF_K: dst = static_cast<int64_t>(insn.imm); break;
        case BPF_JMP32 | BPF_JNE | BPF_K:
        case BPF_JMP32 | BPF_JEQ | BPF_K: {
            REQUIRE(insn.off > 0); // forward only: the verifier wants no loops
            bool equal = static_cast<uint32_t>(dst) == static_cast<uint32_t>(insn.imm);
            if (equal == (insn.code == (BPF_JMP32 | BPF_JEQ | BPF_K)))
                pc += insn.off;
            break;
        }
        case BPF_JMP | BPF_EXIT: return static_cast<int>(reg[BPF_REG_0]);
        default: throw std::runtime_error("unexpected opcode " + std::to_string(insn.code));
        }
    }
    throw std::runtime_error("ran off the end of the program");
}

std::vector<spec::DeviceRule> with_defaults(std::vector<spec::DeviceRule> rules)
{
    auto defaults = default_allowed_devices();
    rules.insert(rules.end(), defaults.begin(), defaults.end());
    return rules;
}

const spec::DeviceRule deny_all{false, "a", {}, {}, "rwm"};
const spec::DeviceRule allow_all{true, "a", {}, {}, "rwm"};

} // namespace

TEST_CASE("device filter: deny all, then the runtime's defaults")
{
    auto program = device_filter_program(with_defaults({deny_all}));
    CHECK(run(program, chr, rd | wr, 1, 3) == 1);  // /dev/null
    CHECK(run(program, chr, rd, 1, 9) == 1);          // /dev/urandom
    CHECK(run(program, chr, rd | wr, 136, 7) == 1); // /dev/pts/7
    CHECK(run(program, chr, mk, 10, 200) == 1);      // mknod of anything
    CHECK(run(program, block, mk, 8, 0) == 1);
    CHECK(run(program, block, rd, 8, 0) == 0); // /dev/sda
    CHECK(run(program, chr, rd, 10, 200) == 0); // /dev/net/tun
    CHECK(run(program, chr, rd, 1, 1) == 0);    // /dev/mem
}

TEST_CASE("device filter: the last matching rule decides")
{
    auto program = device_filter_program(std::vector<spec::DeviceRule>{
        allow_all, {false, "c", 1, 3, "w"}, {false, "b", 8, {}, "rwm"}, {true, "b", 8, 1, "r"}});
    CHECK(run(program, chr, rd, 1, 3) == 1);
    CHECK(run(program, chr, wr, 1, 3) == 0);
    CHECK(run(program, chr, rd | wr, 1, 3) == 0); // part of it is denied
    CHECK(run(program, chr, wr, 1, 5) == 1);
    CHECK(run(program, block, rd, 8, 0) == 0);
    CHECK(run(program, block, rd, 8, 1) == 1);
    CHECK(run(program, block, wr, 8, 1) == 0);
    CHECK(run(program, chr, rd, 8, 0) == 1); // the block rules leave char devices alone

    // Each access bit is decided by the last rule naming it.
    program = device_filter_program(
        std::vector<spec::DeviceRule>{deny_all, {true, "c", 1, 3, "r"}, {true, "c", 1, 3, "w"}});
    CHECK(run(program, chr, rd | wr, 1, 3) == 1);
    CHECK(run(program, chr, rd | wr | mk, 1, 3) == 0);
    program = device_filter_program(
        std::vector<spec::DeviceRule>{{true, "c", 1, 3, "rw"}, {false, "c", 1, 3, "r"}});
    CHECK(run(program, chr, wr, 1, 3) == 1);
    CHECK(run(program, chr, rd, 1, 3) == 0);
}

TEST_CASE("device filter: shape")
{
    // No rule: everything denied.
    auto empty = device_filter_program({});
    CHECK(empty.size() == 8); // 6 loads and shifts, r0 = 0, exit
    CHECK(run(empty, chr, rd, 1, 3) == 0);

    // Rules before an unconditional one can never decide and are left out.
    auto short_program = device_filter_program(std::vector<spec::DeviceRule>{deny_all, {true, "c", 1, 3, "r"}, deny_all});
    CHECK(short_program.size() == 8);
    CHECK(run(short_program, chr, rd, 1, 3) == 0);

    auto typed_a = device_filter_program(std::vector<spec::DeviceRule>{{true, "a", 5, {}, "rwm"}});
    CHECK(run(typed_a, chr, rd, 5, 1) == 1);
    CHECK(run(typed_a, block, rd, 5, 1) == 1);
    CHECK(run(typed_a, block, rd, 6, 1) == 0);

    auto large = device_filter_program(std::vector<spec::DeviceRule>{{true, "c", 4294967295, 0, "r"}});
    CHECK(run(large, chr, rd, 4294967295u, 0) == 1);
    CHECK_THROWS_AS(device_filter_program(std::vector<spec::DeviceRule>{{true, "c", -2, 0, "r"}}), Error);
    CHECK_THROWS_AS(device_filter_program(std::vector<spec::DeviceRule>{{true, "u", 1, 0, "r"}}), Error);
}
