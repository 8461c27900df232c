package board

import "testing"

func TestBoards(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("All() = %d boards, want 2", len(all))
	}
	for _, b := range all {
		if b.Name == "" || b.Console == "" || b.Baud == 0 || len(b.Devices) == 0 || len(b.Compatible) == 0 {
			t.Errorf("board %s is incomplete: %+v", b.Name, b)
		}
	}
	if b := Match([]string{"ti,am335x-bone-black", "ti,am335x-bone", "ti,am33xx"}); b == nil || b.Name != "beaglebone-black" {
		t.Errorf("Match(BeagleBone Black) = %v", b)
	}
	if b := Match([]string{"linux,dummy-virt"}); b == nil || b.Name != "qemu-virt" {
		t.Errorf("Match(virt) = %v", b)
	}
	if b := Match([]string{"raspberrypi,4-model-b"}); b != nil {
		t.Errorf("Match(a Pi) = %s, want nil", b.Name)
	}
	bbb, _ := Load("beaglebone-black")
	if bbb.BootFiles[0].To != "MLO" {
		t.Error("MLO must be the first boot file")
	}
	for _, state := range []string{"booting", "benchmarking", "serving", "error"} {
		if bbb.LEDs[state] == "" {
			t.Errorf("no LED for %s", state)
		}
	}
}

// The eMMC is data: the BeagleBone Black's is mmcblk1 on the MMC1
// controller (its device tree's /aliases), QEMU's the second virtio disk.
func TestEMMC(t *testing.T) {
	bbb, _ := Load("beaglebone-black")
	if bbb.EMMC == nil || bbb.EMMC.Device != "mmcblk1" || bbb.EMMC.Host != "481d8000.mmc" {
		t.Errorf("BeagleBone Black's eMMC = %+v, want mmcblk1 on 481d8000.mmc", bbb.EMMC)
	}
	virt, _ := Load("qemu-virt")
	if virt.EMMC == nil || virt.EMMC.Device != "vdb" || virt.EMMC.Host != "0000:00:10.0" {
		t.Errorf("qemu-virt's eMMC = %+v, want vdb in PCI slot 0x10", virt.EMMC)
	}
}
