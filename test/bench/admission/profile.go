package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// startCPUProfile starts writing a CPU profile to path; stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// apiServerProfile writes kube-apiserver's CPU profile over d to path.
func apiServerProfile(ctx context.Context, cfg *rest.Config, d time.Duration, path string) error {
	rc, err := rest.UnversionedRESTClientFor(withCodecs(cfg))
	if err != nil {
		return err
	}
	body, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("kube-apiserver profile: %w", err)
	}
	return os.WriteFile(path, body, 0o644)
}

func withCodecs(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	return cfg
}

// cpuTimes are CPU times (user and system) by process: this one (the
// clients and the webhook), kube-apiserver and etcd.
type cpuTimes struct {
	self, apiServer, etcd time.Duration
}

func (c cpuTimes) total() time.Duration { return c.self + c.apiServer + c.etcd }

func (c cpuTimes) sub(o cpuTimes) cpuTimes {
	return cpuTimes{c.self - o.self, c.apiServer - o.apiServer, c.etcd - o.etcd}
}

func (c cpuTimes) add(o cpuTimes) cpuTimes {
	return cpuTimes{c.self + o.self, c.apiServer + o.apiServer, c.etcd + o.etcd}
}

// per divides each time by n.
func (c cpuTimes) per(n int) cpuTimes {
	d := time.Duration(max(1, n))
	return cpuTimes{c.self / d, c.apiServer / d, c.etcd / d}
}

// treeCPU is the CPU time this process and its child processes (the
// control plane envtest started) have used, from /proc; zeros where /proc
// cannot be read.
func treeCPU() cpuTimes {
	self := os.Getpid()
	out := cpuTimes{self: procCPU(self)}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if ppid, _ := procField(pid, 1); ppid != self {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		switch strings.TrimSpace(string(comm)) {
		case "kube-apiserver":
			out.apiServer += procCPU(pid)
		case "etcd":
			out.etcd += procCPU(pid)
		}
	}
	return out
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on
// Linux).
const clockTicks = 100

// procCPU is the user and system time of process pid.
func procCPU(pid int) time.Duration {
	utime, _ := procField(pid, 11)
	stime, _ := procField(pid, 12)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// procField returns field i (0 is the state) after the command name of
// /proc/PID/stat.
func procField(pid, i int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	rest := string(b)
	if j := strings.LastIndexByte(rest, ')'); j >= 0 {
		rest = rest[j+1:]
	}
	fields := strings.Fields(rest)
	if i >= len(fields) {
		return 0, errors.New("short stat")
	}
	return strconv.Atoi(fields[i])
}
