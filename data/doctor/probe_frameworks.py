# Run by `strata doctor` inside each Python it finds (python -c), in a child process with a
# deadline. Prints one JSON object; never raises.
import json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable, "frameworks": [], "nvidia_wheels": []}
try:
    from importlib import metadata
    for d in metadata.distributions():
        name = (d.metadata.get("Name") or "").lower()
        if name.startswith("nvidia-"):
            out["nvidia_wheels"].append(name + "==" + (d.version or "?"))
except Exception as e:
    out["nvidia_wheels_error"] = repr(e)
try:
    import torch
    t = {"package": "torch", "version": torch.__version__, "cuda": torch.version.cuda or "",
         "lib_dir": __import__("os").path.join(__import__("os").path.dirname(torch.__file__), "lib")}
    try:
        t["cudnn"] = str(torch.backends.cudnn.version() or "")
    except Exception as e:
        t["cudnn"] = ""
    try:
        t["arch_list"] = list(torch.cuda.get_arch_list())
    except Exception:
        t["arch_list"] = []
    try:
        t["available"] = bool(torch.cuda.is_available())
        t["device_count"] = torch.cuda.device_count() if t["available"] else 0
        if not t["available"]:
            try:
                torch.cuda.init()
                t["reason"] = "torch.cuda.init() succeeded but is_available() is False"
            except Exception as e:
                t["reason"] = str(e)
    except Exception as e:
        t["available"] = False
        t["reason"] = str(e)
    out["frameworks"].append(t)
except ImportError:
    pass
except Exception as e:
    out["frameworks"].append({"package": "torch", "error": repr(e)})
for pkg in ("jax", "cupy"):
    try:
        m = __import__(pkg)
        f = {"package": pkg, "version": getattr(m, "__version__", "")}
        if pkg == "jax":
            try:
                f["devices"] = [str(d) for d in m.devices()]
                gpus = [s for s in f["devices"] if "cuda" in s.lower() or "gpu" in s.lower()]
                f["device_count"] = len(gpus)
                f["available"] = len(gpus) > 0
            except Exception as e:
                f["available"] = False
                f["reason"] = str(e)
        else:
            try:
                f["device_count"] = m.cuda.runtime.getDeviceCount()
                f["available"] = f["device_count"] > 0
                v = int(m.cuda.runtime.runtimeGetVersion())  # 1000 * major + 10 * minor
                f["cuda"] = "%d.%d" % (v // 1000, v % 1000 // 10)
            except Exception as e:
                f["available"] = False
                f["reason"] = str(e)
        out["frameworks"].append(f)
    except ImportError:
        pass
    except Exception as e:
        out["frameworks"].append({"package": pkg, "error": repr(e)})
print(json.dumps(out))
