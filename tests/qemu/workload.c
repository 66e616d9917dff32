/*
 * The guest workload of the QEMU rig: a process named "vtice-work" that opens
 * files, forks and calls getpid in a loop, so a debugger attached at any time
 * finds do_sys_openat2, fork and getpid paths to break on.
 * A short sleep per round keeps the emulated CPU mostly idle.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	unsigned long round;
	char buf[64];

	prctl(PR_SET_NAME, "vtice-work", 0, 0, 0);
	printf("vtice-work: pid %d running\n", getpid());
	fflush(stdout);
	for (round = 0;; round++) {
		int fd = openat(AT_FDCWD, "/etc/vtice-marker", O_RDONLY);

		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				perror("read");
			close(fd);
		}
		if (getpid() <= 0)
			return 1;
		if (round % 16 == 0) {
			pid_t child = fork();

			if (child == 0)
				_exit(0);
			if (child > 0)
				waitpid(child, NULL, 0);
		}
		nanosleep(&pause, NULL);
	}
}
