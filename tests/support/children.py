"""Ending the helper processes tests start (the Gemini fake, the OAuth provider): each ends when
its stdin closes, so a test killed halfway never leaves one running."""
import subprocess


def end_at_eof(proc, timeout=10.0):
    """Closes `proc`'s stdin, waits up to `timeout` s for it to end, kills it if it lingers."""
    if proc.poll() is not None:
        return
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def close_pipes(proc):
    """Closes whichever of `proc`'s pipes are open (after the threads reading them have ended)."""
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if stream:
                stream.close()
        except OSError:
            pass
