package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/test/bench/proc"
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
// control plane envtest started) have used; zeros where /proc cannot be
// read.
func treeCPU() cpuTimes {
	self := os.Getpid()
	var out cpuTimes
	if st, err := proc.ReadStat(self); err == nil {
		out.self = st.CPU
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, err := proc.ReadStat(pid)
		if err != nil || st.PPID != self {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		switch strings.TrimSpace(string(comm)) {
		case "kube-apiserver":
			out.apiServer += st.CPU
		case "etcd":
			out.etcd += st.CPU
		}
	}
	return out
}
