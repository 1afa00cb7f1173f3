package loadcurve.loadgen;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU counters read at the window's start and end, so the counts file can say how busy the
 * machine, the generator and the server were during the window: /proc/stat's all-core jiffies
 * (busy = all but idle and iowait), this process's CPU time (the JVM's own counter), and the
 * server's utime + stime from /proc/PID/stat when its pid is known. Linux only; a counter that
 * cannot be read is -1 and comes out as null.
 */
final class HostProbe {
    /** USER_HZ: /proc reports process times in these ticks, 100 on every Linux ABI (getconf CLK_TCK). */
    static final double CLOCK_TICKS_PER_S = 100;

    record Sample(long nanos, long machineBusyJiffies, long machineTotalJiffies, long generatorCpuNanos,
                  long serverCpuTicks) {
    }

    /** CPU use between two samples, as shares of all cores over that time. */
    record Usage(double seconds, int cores, Double machineShare, double generatorCpuS,
                 double generatorShare, Double serverShare) {
    }

    private final long serverPid;

    HostProbe(long serverPid) {
        this.serverPid = serverPid;
    }

    Sample sample(long nowNanos) {
        long busy = -1;
        long total = -1;
        try {
            String first = Files.readAllLines(Path.of("/proc/stat")).get(0);
            String[] f = first.trim().split("\\s+");
            if (f[0].equals("cpu")) {
                total = 0;
                for (int i = 1; i < f.length && i <= 8; i++) { // user..steal; guest is in user
                    total += Long.parseLong(f[i]);
                }
                busy = total - Long.parseLong(f[4]) - (f.length > 5 ? Long.parseLong(f[5]) : 0);
            }
        } catch (IOException | RuntimeException e) {
            busy = total = -1;
        }
        return new Sample(nowNanos, busy, total, generatorCpuNanos(), serverCpuTicks());
    }

    static Usage between(Sample a, Sample b) {
        double seconds = (b.nanos() - a.nanos()) / 1e9;
        int cores = Runtime.getRuntime().availableProcessors();
        double capacity = seconds * cores;
        Double machine = a.machineTotalJiffies() < 0 || b.machineTotalJiffies() <= a.machineTotalJiffies() ? null
                : (b.machineBusyJiffies() - a.machineBusyJiffies())
                / (double) (b.machineTotalJiffies() - a.machineTotalJiffies());
        double generatorS = a.generatorCpuNanos() < 0 ? Double.NaN
                : (b.generatorCpuNanos() - a.generatorCpuNanos()) / 1e9;
        Double server = a.serverCpuTicks() < 0 || b.serverCpuTicks() < 0 || !(capacity > 0) ? null
                : (b.serverCpuTicks() - a.serverCpuTicks()) / CLOCK_TICKS_PER_S / capacity;
        return new Usage(seconds, cores, machine, generatorS, capacity > 0 ? generatorS / capacity : Double.NaN,
                server);
    }

    private static long generatorCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    private long serverCpuTicks() {
        if (serverPid <= 0) {
            return -1;
        }
        try {
            String stat = Files.readString(Path.of("/proc/" + serverPid + "/stat"));
            // Fields after the command name (which may hold spaces) start at ") "; utime and
            // stime are fields 14 and 15 of the whole line, 12 and 13 after it.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
