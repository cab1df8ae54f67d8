// SPDX-License-Identifier: Apache-2.0
// base/: the file helpers (reads, writes, the directory lister, mkdir -p) and
// the unix socket helpers (connect by path, an fd with a message).
#include "base/error.hpp"
#include "base/files.hpp"
#include "base/unix_socket.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

using namespace cerberus;

namespace {

unsigned mode_of(const std::string& path)
{
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

} // namespace

TEST_CASE("files::read_file: the whole content, and errors that name the path")
{
    TempDir dir;
    std::string file = dir.path + "/config.json";
    std::string big(100000, 'x'); // more than one read
    big += "end";
    std::ofstream(file) << big;
    CHECK(files::read_file(file) == big);
    CHECK(files::read_file_if_exists(file) == big);

    CHECK_THROWS_WITH_AS(files::read_file(dir.path + "/missing"),
                         ("open " + dir.path + "/missing: no such file or directory").c_str(), Error);
    CHECK(files::read_file_if_exists(dir.path + "/missing") == std::nullopt);
    try {
        files::read_file(dir.path);
        FAIL("a directory was read");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "read " + dir.path + ": is a directory");
        CHECK(e.errnum() == EISDIR);
    }
    // A missing file is nullopt only where it is missing, not where it cannot be reached.
    CHECK_THROWS_WITH_AS(files::read_file_if_exists(file + "/below"),
                         ("open " + file + "/below: not a directory").c_str(), Error);
}

TEST_CASE("files::write_file: writes an existing file, and does not create one")
{
    TempDir dir;
    std::string file = dir.path + "/cgroup.procs";
    std::ofstream(file) << "old content, longer";
    files::write_file(file, "new");
    CHECK(files::read_file(file) == "new");
    CHECK_THROWS_WITH_AS(files::write_file(dir.path + "/missing", "1"),
                         ("open " + dir.path + "/missing: no such file or directory").c_str(), Error);
    CHECK_FALSE(files::exists(dir.path + "/missing"));
}

TEST_CASE("files::write_file_atomic: replaces with its mode, leaves no temporary file")
{
    TempDir dir;
    std::string file = dir.path + "/state.json";
    files::write_file_atomic(file, "first", 0640);
    CHECK(files::read_file(file) == "first");
    CHECK(mode_of(file) == 0640);
    files::write_file_atomic(file, "second");
    CHECK(files::read_file(file) == "second");
    CHECK(mode_of(file) == 0600);
    CHECK(files::list_dir(dir.path).size() == 1);

    // A target that cannot be replaced: the error names both paths, the temporary file is gone.
    REQUIRE(::mkdir((dir.path + "/taken").c_str(), 0755) == 0);
    std::ofstream(dir.path + "/taken/entry") << "x";
    CHECK_THROWS_WITH_AS(files::write_file_atomic(dir.path + "/taken", "x"),
                         doctest::Contains(("to " + dir.path + "/taken").c_str()), Error);
    CHECK(files::list_dir(dir.path).size() == 2);
    CHECK_THROWS_WITH_AS(files::write_file_atomic(dir.path + "/missing/state.json", "x"),
                         doctest::Contains(("create " + dir.path + "/missing/state.json.tmp.").c_str()), Error);
}

TEST_CASE("files::write_file_atomic: concurrent writers, a reader sees one whole content or the other")
{
    TempDir dir;
    std::string file = dir.path + "/cache";
    const std::string a(64 * 1024, 'a'), b(64 * 1024, 'b');
    files::write_file_atomic(file, a);
    pid_t writers[2];
    for (int i = 0; i < 2; ++i) {
        writers[i] = ::fork();
        REQUIRE(writers[i] >= 0);
        if (writers[i] == 0) {
            int status = 0;
            try {
                for (int n = 0; n < 200; ++n)
                    files::write_file_atomic(file, i == 0 ? a : b);
            } catch (...) {
                status = 1;
            }
            ::_exit(status);
        }
    }
    int torn = 0;
    for (int n = 0; n < 400; ++n) {
        std::string seen = files::read_file(file);
        if (seen != a && seen != b)
            ++torn;
    }
    for (pid_t pid : writers) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    CHECK(torn == 0);
    CHECK(files::list_dir(dir.path).size() == 1); // no writer left its temporary file
}

TEST_CASE("files::make_dirs: every missing level, existing ones kept, errors name the path")
{
    TempDir dir;
    files::make_dirs(dir.path + "/a/b/c", 0700);
    CHECK(mode_of(dir.path + "/a") == 0700);
    CHECK(mode_of(dir.path + "/a/b/c") == 0700);
    files::make_dirs(dir.path + "/a/b/c"); // already there
    files::make_dirs(dir.path + "/a/b/d");
    CHECK(mode_of(dir.path + "/a/b/d") == 0755);
    std::ofstream(dir.path + "/file") << "x";
    CHECK_THROWS_WITH_AS(files::make_dirs(dir.path + "/file/sub"),
                         ("mkdir " + dir.path + "/file/sub: not a directory").c_str(), Error);
    CHECK(files::exists(dir.path + "/a/b/d"));
    CHECK_FALSE(files::exists(dir.path + "/a/b/e"));
    REQUIRE(::symlink("nowhere", (dir.path + "/dangling").c_str()) == 0);
    CHECK(files::exists(dir.path + "/dangling")); // the link itself
}

TEST_CASE("files::list_dir: names and types, not . and .., none for a missing directory")
{
    TempDir dir;
    REQUIRE(::mkdir((dir.path + "/sub").c_str(), 0755) == 0);
    std::ofstream(dir.path + "/file") << "x";
    auto entries = files::list_dir(dir.path);
    std::sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].name == "file");
    CHECK(entries[0].type == DT_REG);
    CHECK(entries[1].name == "sub");
    CHECK(entries[1].type == DT_DIR);
    CHECK(files::list_dir(dir.path + "/missing").empty());
    CHECK_THROWS_WITH_AS(files::list_dir(dir.path + "/file"),
                         ("listing " + dir.path + "/file: not a directory").c_str(), Error);

    // An open directory is listed from its start, twice alike, and stays open.
    UniqueFd fd(::open(dir.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    CHECK(files::list_dir(fd.get(), "here").size() == 2);
    CHECK(files::list_dir(fd.get(), "here").size() == 2);
    CHECK(::fcntl(fd.get(), F_GETFD) >= 0);
}

TEST_CASE("unix_socket: a stream gets the whole payload and the fd")
{
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    UniqueFd a(fds[0]), b(fds[1]);
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    unix_socket::send_with_fd(a.get(), "hello", write_end.get());
    char buf[16] = {};
    UniqueFd got;
    CHECK(unix_socket::receive_with_fd(b.get(), buf, sizeof buf, 0, got) == 5);
    CHECK(std::string(buf) == "hello");
    REQUIRE(got);
    CHECK((::fcntl(got.get(), F_GETFD) & FD_CLOEXEC) != 0);
    CHECK(::write(got.get(), "!", 1) == 1); // the same pipe
    char c = 0;
    CHECK(::read(read_end.get(), &c, 1) == 1);
    CHECK(c == '!');

    // A message without an fd leaves fd_out empty.
    CHECK(::send(a.get(), "plain", 5, 0) == 5);
    UniqueFd none;
    CHECK(unix_socket::receive_with_fd(b.get(), buf, sizeof buf, 0, none) == 5);
    CHECK_FALSE(none);
}

TEST_CASE("unix_socket: connect by path, and what went wrong when it fails")
{
    TempDir dir;
    std::string path = dir.path + "/console.sock";
    UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(listener);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener.get(), 1) == 0);
    UniqueFd client = unix_socket::connect(path);
    UniqueFd server(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    REQUIRE(server);
    unix_socket::send_with_fd(client.get(), "tty", client.get());
    char buf[8] = {};
    UniqueFd got;
    CHECK(unix_socket::receive_with_fd(server.get(), buf, sizeof buf, 0, got) == 3);
    CHECK(got);

    CHECK_THROWS_WITH_AS(unix_socket::connect("/nonexistent/agent.sock"), "connect: no such file or directory", Error);
    try {
        unix_socket::connect("/" + std::string(200, 'x'));
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "socket path is longer than 107 bytes");
        CHECK(e.errnum() == ENAMETOOLONG);
    }
}
