package health

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Limits of one Lua health script run. Argo CD gives a script one second;
// tollgate gives the same, and bounds the call stack and the strings
// string.rep may build, so that a looping or recursing script yields
// Unknown instead of holding the controller.
const (
	luaTimeout       = time.Second
	luaCallStackSize = 200
	luaMaxRepBytes   = 1 << 20
	// luaRegistrySize is the initial value stack; it grows as needed.
	luaRegistrySize = 1024
)

// compiled caches compiled scripts by their text: one per kind with a Lua
// check, and a few more as argocd-cm changes; it starts again empty past
// maxCompiled entries.
var compiled struct {
	sync.Mutex
	protos map[string]*lua.FunctionProto
}

const maxCompiled = 512

// compile returns the compiled form of script, compiling it once.
func compile(script string) (*lua.FunctionProto, error) {
	compiled.Lock()
	defer compiled.Unlock()
	if p, ok := compiled.protos[script]; ok {
		return p, nil
	}
	chunk, err := parse.Parse(strings.NewReader(script), "health.lua")
	if err != nil {
		return nil, err
	}
	proto, err := lua.Compile(chunk, "health.lua")
	if err != nil {
		return nil, err
	}
	if compiled.protos == nil || len(compiled.protos) >= maxCompiled {
		compiled.protos = map[string]*lua.FunctionProto{}
	}
	compiled.protos[script] = proto
	return proto, nil
}

// errLuaResult marks a script that returned something other than Argo CD's
// {status, message} table.
var errLuaResult = errors.New("health script returned no health")

// runLua runs a health script on obj (the live object) with Argo CD's
// contract: the global obj holds the object, the script returns a table
// with status (one of the Status values) and message. Only the base
// (without load, loadstring, dofile, loadfile, require and print), table,
// string and math libraries are open. Any error or panic is returned.
func runLua(ctx context.Context, script string, obj map[string]any) (res Result, err error) {
	proto, err := compile(script)
	if err != nil {
		return Result{}, fmt.Errorf("health script: %w", err)
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: luaCallStackSize, RegistrySize: luaRegistrySize})
	defer L.Close()
	defer func() {
		if p := recover(); p != nil {
			res, err = Result{}, fmt.Errorf("health script panicked: %v", p)
		}
	}()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	openSafeOS(L)
	for _, name := range []string{"dofile", "loadfile", "load", "loadstring", "require", "module", "print", "collectgarbage", "getfenv", "setfenv", "newproxy"} {
		L.SetGlobal(name, lua.LNil)
	}
	if str, ok := L.GetGlobal(lua.StringLibName).(*lua.LTable); ok {
		str.RawSetString("rep", L.NewFunction(boundedRep))
	}
	ctx, cancel := context.WithTimeout(ctx, luaTimeout)
	defer cancel()
	L.SetContext(ctx)
	L.SetGlobal("obj", toLua(L, obj))
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("health script ran longer than %s", luaTimeout)
		}
		return Result{}, fmt.Errorf("health script: %w", err)
	}
	out, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return Result{}, fmt.Errorf("%w: want a table with status and message, got %s", errLuaResult, L.Get(-1).Type())
	}
	status, _ := out.RawGetString("status").(lua.LString)
	if _, known := order[Status(status)]; !known {
		return Result{}, fmt.Errorf("%w: status %q is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown", errLuaResult, string(status))
	}
	res = Result{Status: Status(status)}
	if msg, ok := out.RawGetString("message").(lua.LString); ok {
		res.Message = string(msg)
	}
	return res, nil
}

// safeOSFuncs are the functions of Lua's os library a health script gets,
// as in Argo CD: reading the clock and formatting times; nothing that
// reaches the process, the environment or files.
var safeOSFuncs = []string{"clock", "date", "difftime", "time"}

// openSafeOS sets the global os to a table of safeOSFuncs only.
func openSafeOS(L *lua.LState) {
	L.Push(L.NewFunction(lua.OpenOs))
	L.Push(lua.LString(lua.OsLibName))
	L.Call(1, 0)
	full, _ := L.GetGlobal(lua.OsLibName).(*lua.LTable)
	safe := L.NewTable()
	for _, name := range safeOSFuncs {
		if full != nil {
			safe.RawSetString(name, full.RawGetString(name))
		}
	}
	L.SetGlobal(lua.OsLibName, safe)
}

// boundedRep is string.rep refusing results larger than luaMaxRepBytes.
func boundedRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n > 0 && len(s) > 0 && n > luaMaxRepBytes/len(s) {
		L.RaiseError("string.rep: result larger than %d bytes", luaMaxRepBytes)
		return 0
	}
	if n < 0 {
		n = 0
	}
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	L.Push(lua.LString(out))
	return 1
}

// toLua converts a decoded JSON value to Lua as Argo CD does: objects and
// arrays are tables (arrays 1-based), numbers are numbers, null is nil.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case map[string]any:
		t := L.CreateTable(0, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.RawSetString(k, toLua(L, v[k]))
		}
		return t
	case []any:
		t := L.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(L, item))
		}
		return t
	default:
		return lua.LString(fmt.Sprint(v))
	}
}
