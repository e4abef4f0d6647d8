//! P = running a command through the shell: fork + execve of /bin/sh with
//! `-c 'exit 7'` + wait (lmbench's lat_proc shell, which has the shell run
//! a tiny program; here the shell's own `exit` builtin, so P is the
//! shell's start-up and nothing else). Exit status 7 can only come from
//! the shell having run the command: a failed exec exits 127, a shell
//! that did not understand it exits 2.

use super::adapter;
use super::check::{add_tail, forking_plan, Tally};
use crate::shared::CpuWait;
use std::ffi::CString;
use yamba_core::harness::measure_single;
use yamba_core::{Benchmark, Cold, Ctx, Machine, RunConfig, Unit};

const SHELL: &str = "/bin/sh";
/// What the shell is asked to run, and the status that proves it did.
const COMMAND: &str = "exit 7";
const STATUS: i32 = 7;

pub static SHELL_BENCH: Benchmark = Benchmark {
    id: "proc.shell",
    area: "proc",
    unit: Unit::Nanoseconds,
    description: "fork + exec of /bin/sh -c 'exit 7' + wait: starting a shell to run a command",
    adapter: adapter::NAME,
    requires: needs_shell,
    run: run_shell,
    cold: Cold::NotMeaningful(
        "fork would copy the evictor's sweep buffer (2× the last-level cache, written) before the exec, as in proc.fork.light; proc.posix_spawn is the cold exec",
    ),
    ..Benchmark::TEMPLATE
};

fn needs_shell(_: &Machine, _: &RunConfig) -> Result<(), String> {
    if std::path::Path::new(SHELL).is_file() {
        Ok(())
    } else {
        Err(format!("needs {SHELL}"))
    }
}

/// argv and envp prepared before any fork: the child only calls execve.
struct ShellCommand {
    path: CString,
    args: [CString; 3],
    env: CString,
}

impl ShellCommand {
    fn new(command: &str) -> ShellCommand {
        ShellCommand {
            path: CString::new(SHELL).unwrap(),
            args: [
                CString::new("sh").unwrap(),
                CString::new("-c").unwrap(),
                CString::new(command).unwrap(),
            ],
            env: CString::new("PATH=/usr/bin:/bin").unwrap(),
        }
    }

    /// Forks a child that execs the shell (exit 127 if exec fails).
    fn start(&self) -> Result<i32, String> {
        let argv = [
            self.args[0].as_ptr(),
            self.args[1].as_ptr(),
            self.args[2].as_ptr(),
            std::ptr::null(),
        ];
        let envp = [self.env.as_ptr(), std::ptr::null()];
        adapter::fork(|| {
            // SAFETY: NUL-terminated arrays built before the fork; on
            // failure the child exits 127.
            unsafe { libc::execve(self.path.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
            127
        })
    }
}

fn run_shell(ctx: &mut Ctx) -> Result<(), String> {
    let cmd = ShellCommand::new(COMMAND);
    let mut tally = Tally::default();
    let wait = CpuWait::start();
    let m = measure_single(
        ctx.clock(),
        ctx.base_ns(),
        &forking_plan(ctx),
        None,
        || {},
        || {
            tally.created += 1;
            match cmd.start() {
                Ok(pid) => tally.record(adapter::wait(pid), STATUS),
                Err(e) => tally.fail(e),
            }
        },
    );
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    let target = std::fs::canonicalize(SHELL)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| SHELL.into());
    r.param("shell", SHELL)
        .param("shell_is", target)
        .param("command", COMMAND)
        .param("environment", "PATH only");
    tally.add_evidence(
        &mut r,
        STATUS,
        "the shell ran the command: only its `exit 7` yields status 7",
    );
    add_tail(&mut r);
    ctx.push(r);
    Ok(())
}
