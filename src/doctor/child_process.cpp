// fork + exec with pipes, a poll loop against a deadline, and SIGKILL to the child's process
// group on timeout (so grandchildren such as a python's subprocesses go too).
#include "strata/doctor/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "strata/core/timer.hpp"

namespace strata::doctor {

ChildResult run_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                      double timeout_s, std::size_t max_output) {
  ChildResult r;
  if (argv.empty()) {
    r.error = "no program";
    return r;
  }
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    r.error = std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return r;
  }
  // Build argv/envp before fork: only async-signal-safe calls are allowed in the child.
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& s : env_strings) cenv.push_back(s.data());
  cenv.push_back(nullptr);

  strata::Timer timer;
  pid_t pid = fork();
  if (pid < 0) {
    r.error = std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]}) ::close(fd);
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execve(cargv[0], cargv.data(), cenv.data());
    int e = errno;
    ssize_t ignored = ::write(exec_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  if (::read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    r.error = std::string("cannot execute ") + argv[0] + ": " + std::strerror(exec_errno);
  } else {
    r.started = true;
  }
  ::close(exec_pipe[0]);

  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  while (open_fds > 0) {
    double left = timeout_s - timer.seconds();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    int n = poll(fds, 2, int(left * 1000) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[16384];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::size_t room = max_output > sinks[i]->size() ? max_output - sinks[i]->size() : 0;
      sinks[i]->append(buf, std::min<std::size_t>(room, std::size_t(got)));
    }
  }
  if (r.timed_out) kill(-pid, SIGKILL);
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  // The pipes are closed (or we gave up on them); wait out the exit, bounded by the deadline.
  while (true) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (timer.seconds() > timeout_s) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(2000);
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.seconds = timer.seconds();
  return r;
}

}  // namespace strata::doctor
