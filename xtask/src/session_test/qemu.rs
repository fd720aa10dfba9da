//! The virtual machine: the QEMU command line (q35 under TCG, the host's root shared read-only
//! over 9p, two GPUs — a virtio-gpu card, and a QXL card on a PCIe root port so it can be
//! unplugged — a virtio keyboard and tablet, a virtio-serial control port) and a QMP client
//! for the screendumps, the unplug and the keys the script asks for.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The QMP id, QEMU device, PCIe bus and preferred mode of each GPU, in PCI order: the first is
/// the boot GPU, the second sits on a hot-pluggable root port, the third is plugged in while
/// the session runs, on a second root port. QEMU 7.2 refuses to hot-unplug a virtio-gpu card
/// ("Device 'virtio-gpu-pci' does not support hotplugging"; it cannot be plugged in while
/// running either). A bochs-display can be, but its kernel driver has no PRIME, so Mesa's EGL
/// cannot render into its buffers. The second card is a QXL (the kernel's `qxl` DRM driver),
/// which can be unplugged and is drawn like the first. It cannot be plugged into its slot
/// again: QEMU 7.2 never reports the unplugged card deleted (no `DEVICE_DELETED`, though the
/// guest powers the slot off within seconds and closes the card's last file soon after), and
/// the slot stays taken until it does. So a new card goes into the second root port.
pub const GPUS: [Gpu; 3] = [
    Gpu {
        id: "gpu0",
        driver: "virtio-gpu-pci",
        bus: "pcie.0",
        size: (1280, 800),
        at_boot: true,
    },
    Gpu {
        id: "gpu1",
        driver: "qxl",
        bus: "rp1",
        size: (1024, 768),
        at_boot: true,
    },
    Gpu {
        id: "gpu2",
        driver: "qxl",
        bus: "rp2",
        size: (1024, 768),
        at_boot: false,
    },
];

pub struct Gpu {
    pub id: &'static str,
    pub driver: &'static str,
    pub bus: &'static str,
    pub size: (u32, u32),
    /// Present when the VM starts (else plugged in by the script).
    pub at_boot: bool,
}

impl Gpu {
    /// Its `-device` / `device_add` arguments.
    fn device(&self) -> Value {
        json!({
            "driver": self.driver,
            "id": self.id,
            "bus": self.bus,
            "xres": self.size.0,
            "yres": self.size.1,
        })
    }
}

/// What the VM is started with.
pub struct Machine<'a> {
    pub kernel: &'a Path,
    pub initramfs: &'a Path,
    pub out: &'a Path,
    pub memory_mb: u32,
    pub cpus: u32,
    /// `nice` level for QEMU (0: normal priority).
    pub nice: i32,
}

/// Unix sockets of a running VM, in the output folder.
pub struct Sockets {
    pub qmp: PathBuf,
    pub control: PathBuf,
    /// QEMU's VNC server on the first GPU's console (see [`super::vnc`]).
    pub vnc: PathBuf,
}

/// Starts QEMU; its serial console goes to `out/console.log`.
pub fn start(m: &Machine<'_>) -> Result<(Child, Sockets)> {
    let sockets = Sockets {
        qmp: m.out.join("qmp.sock"),
        control: m.out.join("control.sock"),
        vnc: m.out.join("vnc.sock"),
    };
    for s in [&sockets.qmp, &sockets.control, &sockets.vnc] {
        let _ = std::fs::remove_file(s);
    }
    let console = m.out.join("console.log");
    let path = |p: &Path| p.display().to_string();
    let mut args: Vec<String> = vec![
        "-name".into(),
        "pcp-session-test".into(),
        "-machine".into(),
        "q35,accel=tcg".into(),
        // Native PCIe hotplug on the root port (the guest's pciehp), not ACPI's.
        "-global".into(),
        "ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off".into(),
        // A CPU without AVX: llvmpipe's JIT (and libvosk) use what CPUID offers, and code for
        // TCG's emulated AVX crashed in llvmpipe's JIT output (SIGSEGV in its render threads).
        "-cpu".into(),
        "Westmere".into(),
        "-smp".into(),
        m.cpus.to_string(),
        "-m".into(),
        format!("{}M", m.memory_mb),
        "-nodefaults".into(),
        "-no-user-config".into(),
        "-no-reboot".into(),
        "-vga".into(),
        "none".into(),
        "-display".into(),
        "none".into(),
        // Only to change the first head's preferred size (a VNC client's desktop-size request);
        // nothing is watched through it.
        "-vnc".into(),
        format!("unix:{},display=gpu0,head=0", path(&sockets.vnc)),
        "-kernel".into(),
        path(m.kernel),
        "-initrd".into(),
        path(m.initramfs),
        "-append".into(),
        "console=ttyS0 panic=-1 loglevel=4 rdinit=/init".into(),
        "-chardev".into(),
        format!("file,id=console,path={}", path(&console)),
        "-serial".into(),
        "chardev:console".into(),
        "-qmp".into(),
        format!("unix:{},server=on,wait=off", path(&sockets.qmp)),
        "-virtfs".into(),
        "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap".into(),
        "-virtfs".into(),
        format!(
            "local,path={},mount_tag=pcpout,security_model=none,multidevs=remap",
            path(m.out)
        ),
        "-device".into(),
        "pcie-root-port,id=rp1,chassis=1,slot=1".into(),
        // Empty at boot: the firmware reserves it windows big enough for a QXL card's BARs
        // (two 64 MiB memory BARs, an I/O BAR), so a card plugged in later can be mapped.
        "-device".into(),
        "pcie-root-port,id=rp2,chassis=2,slot=2,mem-reserve=256M,io-reserve=4K".into(),
        "-device".into(),
        "virtio-keyboard-pci,id=kbd".into(),
        "-device".into(),
        "virtio-tablet-pci,id=tablet".into(),
        "-device".into(),
        "virtio-serial-pci".into(),
        "-chardev".into(),
        format!(
            "socket,id=control,path={},server=on,wait=off",
            path(&sockets.control)
        ),
        "-device".into(),
        "virtserialport,chardev=control,name=pcp.control".into(),
    ];
    for gpu in GPUS.iter().filter(|g| g.at_boot) {
        args.push("-device".into());
        args.push(format!(
            "{},id={},bus={},xres={},yres={}",
            gpu.driver, gpu.id, gpu.bus, gpu.size.0, gpu.size.1
        ));
    }
    let mut cmd = if m.nice != 0 {
        let mut c = Command::new("nice");
        c.arg("-n")
            .arg(m.nice.to_string())
            .arg("qemu-system-x86_64");
        c
    } else {
        Command::new("qemu-system-x86_64")
    };
    let log = std::fs::File::create(m.out.join("qemu.log"))?;
    let child = cmd
        .args(&args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .context("cannot start qemu-system-x86_64 (Debian: qemu-system-x86)")?;
    Ok((child, sockets))
}

/// Connects to a Unix socket QEMU is about to create.
pub fn connect(path: &Path, within: Duration) -> Result<UnixStream> {
    let start = Instant::now();
    loop {
        match UnixStream::connect(path) {
            Ok(s) => return Ok(s),
            Err(e) if start.elapsed() > within => {
                bail!("cannot connect to {}: {e}", path.display())
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// A QMP connection: commands and their answers, with the events that arrive in between kept.
pub struct Qmp {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    pub events: Vec<Value>,
}

impl Qmp {
    pub fn open(path: &Path) -> Result<Qmp> {
        let stream = connect(path, Duration::from_secs(20))?;
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        let mut qmp = Qmp {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
            events: Vec::new(),
        };
        let greeting = qmp.read()?;
        if greeting.get("QMP").is_none() {
            bail!("QEMU's QMP greeting was {greeting}");
        }
        qmp.execute("qmp_capabilities", json!({}))?;
        Ok(qmp)
    }

    fn read(&mut self) -> Result<Value> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            bail!("QEMU closed its QMP socket");
        }
        serde_json::from_str(&line).with_context(|| format!("QMP sent {line:?}"))
    }

    /// Runs `command`; its `return` value, or its error as an error.
    pub fn execute(&mut self, command: &str, arguments: Value) -> Result<Value> {
        let request = json!({"execute": command, "arguments": arguments});
        writeln!(self.writer, "{request}")?;
        loop {
            let reply = self.read()?;
            if reply.get("event").is_some() {
                self.events.push(reply);
            } else if let Some(r) = reply.get("return") {
                return Ok(r.clone());
            } else if let Some(e) = reply.get("error") {
                bail!("QMP {command} failed: {e}");
            }
        }
    }

    /// Waits for event `name` (about device `device`, when given) seen since the last call.
    pub fn wait_event(&mut self, name: &str, device: Option<&str>, within: Duration) -> Result<()> {
        let start = Instant::now();
        let matches = |e: &Value| {
            e["event"] == name && device.is_none_or(|d| e["data"]["device"].as_str() == Some(d))
        };
        loop {
            if let Some(i) = self.events.iter().position(matches) {
                self.events.remove(i);
                return Ok(());
            }
            if start.elapsed() > within {
                bail!("QEMU sent no {name} within {within:?}");
            }
            self.writer
                .set_read_timeout(Some(Duration::from_millis(500)))?;
            let got = self.read();
            self.writer
                .set_read_timeout(Some(Duration::from_secs(120)))?;
            match got {
                Ok(e) => self.events.push(e),
                Err(e)
                    if e.downcast_ref::<std::io::Error>().is_some_and(|io| {
                        matches!(
                            io.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        )
                    }) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes head `head` of display device `device` as a PNG.
    pub fn screendump(&mut self, device: &str, head: u32, file: &Path) -> Result<()> {
        self.execute(
            "screendump",
            json!({"filename": file.display().to_string(), "device": device, "head": head,
                   "format": "png"}),
        )?;
        Ok(())
    }

    /// Asks for `gpu` to be unplugged from its root port (the attention button: the guest's
    /// pciehp takes the card away, then powers the slot off). Returns at once; the guest goes on
    /// while QEMU waits for the slot to go off.
    pub fn unplug(&mut self, gpu: &Gpu) -> Result<()> {
        self.execute("device_del", json!({"id": gpu.id}))?;
        Ok(())
    }

    /// Plugs `gpu` into its root port. A card unplugged before must first be reported deleted
    /// (the same id cannot be added again before): the guest powers the slot off only after
    /// its driver let go, which an emulated CPU under load can take minutes to do.
    pub fn plug(&mut self, gpu: &Gpu, was_unplugged: bool) -> Result<()> {
        if was_unplugged {
            self.wait_event("DEVICE_DELETED", Some(gpu.id), Duration::from_secs(150))?;
        }
        self.execute("device_add", gpu.device())?;
        Ok(())
    }

    /// Whether QEMU has reported device `id` deleted (looking at the events that came so far).
    pub fn deleted(&mut self, id: &str) -> bool {
        // A cheap command collects the events QEMU sent since the last one.
        let _ = self.execute("query-status", json!({}));
        self.events
            .iter()
            .any(|e| e["event"] == "DEVICE_DELETED" && e["data"]["device"].as_str() == Some(id))
    }

    /// Presses `keys` (QEMU qcodes, e.g. `ctrl`, `alt`, `f2`) together, then releases them in
    /// reverse order. QEMU gives them to the keyboard the guest last activated (the virtio
    /// keyboard once its driver is up); naming a device needs it bound to a display console,
    /// which a virtio keyboard is not.
    pub fn chord(&mut self, keys: &[&str]) -> Result<()> {
        let event = |key: &str, down: bool| json!({"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": key}}});
        for key in keys {
            self.execute("input-send-event", json!({"events": [event(key, true)]}))?;
            std::thread::sleep(Duration::from_millis(40));
        }
        for key in keys.iter().rev() {
            self.execute("input-send-event", json!({"events": [event(key, false)]}))?;
            std::thread::sleep(Duration::from_millis(40));
        }
        Ok(())
    }
}
