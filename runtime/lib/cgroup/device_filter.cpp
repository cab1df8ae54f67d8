// SPDX-License-Identifier: Apache-2.0
#include "cgroup/device_filter.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"

#include <bpf/bpf.h>

#include <cstring>

namespace cerberus::cgroups {

namespace {

// Registers the program keeps the request in: struct bpf_cgroup_dev_ctx is
// { access_type = access << 16 | type, major, minor }, all u32.
constexpr uint8_t ctx_reg = BPF_REG_1, type_reg = BPF_REG_2, access_reg = BPF_REG_3, major_reg = BPF_REG_4,
                  minor_reg = BPF_REG_5, scratch_reg = BPF_REG_6;

constexpr bpf_insn make_insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    bpf_insn insn{};
    insn.code = code;
    insn.dst_reg = dst;
    insn.src_reg = src;
    insn.off = off;
    insn.imm = imm;
    return insn;
}

constexpr bpf_insn load_u32(uint8_t dst, int16_t offset)
{
    return make_insn(BPF_LDX | BPF_MEM | BPF_W, dst, ctx_reg, offset, 0);
}

constexpr bpf_insn alu32_imm(uint8_t op, uint8_t dst, int32_t imm)
{
    return make_insn(BPF_ALU | op | BPF_K, dst, 0, 0, imm);
}

// Jump targets are patched once the rule's block is complete.
constexpr bpf_insn jump32_imm(uint8_t op, uint8_t reg, uint32_t value)
{
    return make_insn(BPF_JMP32 | op | BPF_K, reg, 0, 0, static_cast<int32_t>(value));
}

constexpr bpf_insn return_value(int32_t value)
{
    return make_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, value);
}

constexpr bpf_insn exit_insn()
{
    return make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

// The name the kernel shows for our programs (bpftool prog): what an update replaces.
constexpr const char* program_name = "cerberus_dev";

uint32_t device_type_bits(const std::string& type)
{
    return type == "c" ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK;
}

// Access bits are decided one by one, each by the last rule that matches the
// device and names the bit: access_reg holds the bits asked for and not yet
// allowed. A deny rule naming one of them denies; an allow rule clears the
// bits it names and allows once none is left. Falls through to the next
// block when the rule does not decide. unconditional: it always decides.
std::vector<bpf_insn> rule_block(const spec::DeviceRule& rule, bool& unconditional)
{
    std::vector<bpf_insn> block;
    std::vector<size_t> jumps_to_next;
    auto jump_to_next = [&](uint8_t op, uint8_t reg, uint32_t value) {
        jumps_to_next.push_back(block.size());
        block.push_back(jump32_imm(op, reg, value));
    };
    if (rule.type != "a")
        jump_to_next(BPF_JNE, type_reg, device_type_bits(rule.type));
    if (rule.major)
        jump_to_next(BPF_JNE, major_reg, static_cast<uint32_t>(*rule.major));
    if (rule.minor)
        jump_to_next(BPF_JNE, minor_reg, static_cast<uint32_t>(*rule.minor));
    unconditional = jumps_to_next.empty();
    uint32_t access = device_access_bits(rule.access);
    if (access != all_device_access) {
        unconditional = false;
        if (rule.allow) {
            block.push_back(alu32_imm(BPF_AND, access_reg, static_cast<int32_t>(~access)));
            jump_to_next(BPF_JNE, access_reg, 0);
        } else {
            block.push_back(make_insn(BPF_ALU | BPF_MOV | BPF_X, scratch_reg, access_reg, 0, 0));
            block.push_back(alu32_imm(BPF_AND, scratch_reg, static_cast<int32_t>(access)));
            jump_to_next(BPF_JEQ, scratch_reg, 0);
        }
    }
    block.push_back(return_value(rule.allow ? 1 : 0));
    block.push_back(exit_insn());
    for (size_t at : jumps_to_next)
        block[at].off = static_cast<int16_t>(block.size() - at - 1);
    return block;
}

} // namespace

uint32_t device_access_bits(const std::string& access)
{
    uint32_t bits = 0;
    for (char c : access) {
        if (c == 'r')
            bits |= BPF_DEVCG_ACC_READ;
        else if (c == 'w')
            bits |= BPF_DEVCG_ACC_WRITE;
        else if (c == 'm')
            bits |= BPF_DEVCG_ACC_MKNOD;
        else
            throw Error("linux.resources.devices: access \"" + access + "\" has letters other than r, w, m", EINVAL);
    }
    return bits;
}

void check_device_rule(const spec::DeviceRule& rule)
{
    if (rule.type != "a" && rule.type != "b" && rule.type != "c")
        throw Error("linux.resources.devices: type \"" + rule.type + "\" is not a, b or c", EINVAL);
    for (const auto& number : {rule.major, rule.minor})
        if (number && (*number < 0 || *number > UINT32_MAX))
            throw Error("linux.resources.devices: device number " + std::to_string(*number) + " is out of range",
                        EINVAL);
    device_access_bits(rule.access);
}

std::vector<spec::DeviceRule> default_allowed_devices()
{
    auto allow = [](const char* type, std::optional<int64_t> major, std::optional<int64_t> minor, const char* access) {
        return spec::DeviceRule{true, type, major, minor, access};
    };
    return {
        allow("c", {}, {}, "m"),    allow("b", {}, {}, "m"),     // mknod of any node
        allow("c", 1, 3, "rwm"),    allow("c", 1, 5, "rwm"),     // null, zero
        allow("c", 1, 7, "rwm"),    allow("c", 1, 8, "rwm"),     // full, random
        allow("c", 1, 9, "rwm"),    allow("c", 5, 0, "rwm"),     // urandom, tty
        allow("c", 5, 2, "rwm"),    allow("c", 136, {}, "rwm"),  // ptmx, pts/*
    };
}

std::vector<bpf_insn> device_filter_program(std::span<const spec::DeviceRule> rules)
{
    std::vector<bpf_insn> program = {
        load_u32(type_reg, offsetof(bpf_cgroup_dev_ctx, access_type)),
        alu32_imm(BPF_AND, type_reg, 0xffff),
        load_u32(access_reg, offsetof(bpf_cgroup_dev_ctx, access_type)),
        alu32_imm(BPF_RSH, access_reg, 16),
        load_u32(major_reg, offsetof(bpf_cgroup_dev_ctx, major)),
        load_u32(minor_reg, offsetof(bpf_cgroup_dev_ctx, minor)),
    };
    for (const auto& rule : rules)
        check_device_rule(rule);
    // Last rule first: the first match found is the last one in the spec.
    for (auto rule = rules.rbegin(); rule != rules.rend(); ++rule) {
        bool unconditional = false;
        std::vector<bpf_insn> block = rule_block(*rule, unconditional);
        program.insert(program.end(), block.begin(), block.end());
        if (unconditional)
            return program; // the rules before it can never decide
    }
    program.push_back(return_value(0));
    program.push_back(exit_insn());
    return program;
}

void attach_device_filter(int cgroup_dir_fd, const std::vector<bpf_insn>& program)
{
    char log[4096] = "";
    bpf_prog_load_opts opts{};
    opts.sz = sizeof opts;
    opts.log_buf = log;
    opts.log_size = sizeof log;
    UniqueFd prog(bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, program_name, "GPL", program.data(), program.size(),
                                &opts));
    if (!prog) {
        int err = errno;
        std::string verifier = log[0] ? " (verifier: " + std::string(log, strnlen(log, 300)) + ")" : "";
        throw_errno("loading the device filter BPF program" + verifier, err);
    }

    uint32_t count = 0;
    if (bpf_prog_query(cgroup_dir_fd, BPF_CGROUP_DEVICE, 0, nullptr, nullptr, &count) < 0)
        throw_errno("listing the device filter programs attached to the cgroup");
    std::vector<uint32_t> old_ids(count);
    if (count > 0 && bpf_prog_query(cgroup_dir_fd, BPF_CGROUP_DEVICE, 0, nullptr, old_ids.data(), &count) < 0)
        throw_errno("listing the device filter programs attached to the cgroup");
    old_ids.resize(count);

    if (bpf_prog_attach(prog.get(), cgroup_dir_fd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI) < 0)
        throw_errno("attaching the device filter BPF program to the cgroup");
    for (uint32_t id : old_ids) {
        UniqueFd old(bpf_prog_get_fd_by_id(id));
        if (!old && errno == ENOENT)
            continue;
        // Only our own: systemd's program (DevicePolicy=strict) stays, and both must allow.
        bpf_prog_info info{};
        uint32_t info_size = sizeof info;
        if (old && bpf_obj_get_info_by_fd(old.get(), &info, &info_size) == 0 &&
            std::strncmp(info.name, program_name, sizeof info.name) != 0)
            continue;
        if (!old || (bpf_prog_detach2(old.get(), cgroup_dir_fd, BPF_CGROUP_DEVICE) < 0 && errno != ENOENT))
            throw_errno("detaching the previous device filter BPF program " + std::to_string(id));
    }
}

} // namespace cerberus::cgroups
