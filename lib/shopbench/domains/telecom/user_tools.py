"""The customer's 30 tools over their own phone (issue 28 item 1: dual control), written from
τ²-bench's ``src/tau2/domains/telecom/user_tools.py`` (MIT; read, not copied): the published names,
parameters and docstrings (the descriptions the simulated customer sees), the device simulation
(network search, speed test, MMS check, airplane mode, SIM, APN, Wi-Fi, VPN, app permissions,
payment request), the status texts. A wrong argument is the ``"Error: ..."`` text, never a crash.

Beside the tools, what τ²-bench's tasks call on the phone and the customer is not given: the
set-up functions (``set_user_info``, ``set_user_location``, ``turn_*``, ``unseat_sim_card``,
``lock_sim_card``, ``break_*``, ``set_wifi_calling``, ``remove_app_permission``,
``simulate_network_search``) and the ``assert_*`` checks (environment assertions).

One difference (FIDELITY.md): τ²-bench's ``connect_vpn`` assigns a class-level ``VpnDetails`` object
that ``break_vpn`` then mutates, so in one τ²-bench process a VPN connected after any ``break_vpn``
reports poor performance; here each connection gets its own copy (excellent performance).
"""

from __future__ import annotations

from typing import Any, Literal

from .data_model import (
    APNNames,
    APNSettings,
    AppPermissions,
    AppStatus,
    MockPhoneAttributes,
    NetworkModePreference,
    NetworkStatus,
    NetworkTechnology,
    PaymentRequest,
    PerformanceLevel,
    SignalStrength,
    SimStatus,
    TelecomUserDB,
    UserSurroundings,
    VpnDetails,
)
from .toolkit import WRITE, call_tool, is_tool, tool_names, tool_spec

__all__ = ["USER_TOOL_NAMES", "USER_TOOL_SPECS", "TelecomUserTools"]

_SIGNAL_ICON = {SignalStrength.NONE: "📵 No Signal", SignalStrength.POOR: "📶¹ Poor", SignalStrength.FAIR: "📶² Fair",
                SignalStrength.GOOD: "📶³ Good", SignalStrength.EXCELLENT: "📶⁴ Excellent"}  # fmt: skip
_TECH_SPEED = {NetworkTechnology.TWO_G: (0.1, 0.4), NetworkTechnology.THREE_G: (1.0, 5.0),
               NetworkTechnology.FOUR_G: (10.0, 100.0), NetworkTechnology.FIVE_G: (50.0, 500.0),
               NetworkTechnology.NONE: (0.0, 0.0)}  # fmt: skip
_SIGNAL_FACTOR = {SignalStrength.POOR: 0.2, SignalStrength.FAIR: 0.5, SignalStrength.GOOD: 0.8,
                  SignalStrength.EXCELLENT: 1.0, SignalStrength.NONE: 0.0}  # fmt: skip
_MODE_TECH = {NetworkModePreference.FOUR_G_ONLY: NetworkTechnology.FOUR_G,
              NetworkModePreference.THREE_G_ONLY: NetworkTechnology.THREE_G,
              NetworkModePreference.TWO_G_ONLY: NetworkTechnology.TWO_G}  # fmt: skip
_ADVICE = {"Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
           "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
           "Fair": "Connection is okay for web browsing and some standard definition streaming.",
           "Good": "Connection is good for most activities, including HD streaming.",
           "Excellent": "Connection is very fast."}  # fmt: skip


def _default_vpn() -> VpnDetails:
    return VpnDetails(
        server_address="192.168.1.1", protocol="OpenVPN", server_performance=PerformanceLevel.EXCELLENT
    )


class TelecomUserTools:
    """
    Provides methods to simulate user actions and agent instructions
    on a MockPhoneAttributes instance.
    """

    def __init__(self, db: TelecomUserDB):
        self.db = db

    def execute(self, name: str, arguments: Any) -> tuple[bool, str]:
        return call_tool(self, USER_TOOL_NAMES, name, arguments)

    @property
    def device(self) -> MockPhoneAttributes:
        return self.db.device

    @property
    def surroundings(self) -> UserSurroundings:
        return self.db.surroundings

    # --- set-up (not tools) ---
    def set_user_info(self, name: str, phone_number: str) -> None:
        self.db.surroundings.name = name
        self.db.surroundings.phone_number = phone_number

    def set_user_location(self, abroad: bool) -> None:
        self.db.surroundings.is_abroad = abroad

    # --- Status Bar ---
    @is_tool()
    def check_status_bar(self) -> str:
        """Shows what icons are currently visible in your phone's status bar (the area at the top of the screen). Displays network signal strength, mobile data status (enabled, disabled, data saver), Wi-Fi status, and battery level."""  # noqa: E501
        return f"Status Bar: {self._check_status_bar()}"

    def _check_status_bar(self) -> str:
        d = self.device
        ind = []
        if d.airplane_mode:
            ind.append("✈️ Airplane Mode")
        else:
            ind.append(_SIGNAL_ICON.get(d.network_signal_strength, "📵 No Signal"))
            if d.network_technology_connected != NetworkTechnology.NONE:
                ind.append(NetworkTechnology(d.network_technology_connected).value)
            if d.data_enabled and d.network_technology_connected != NetworkTechnology.NONE:
                ind.append("📱 Data Enabled")
                if d.data_saver_mode:
                    ind.append("🔽 Data Saver")
            else:
                ind.append("📵 Data Disabled")
        if d.wifi_enabled and d.wifi_connected:
            ind.append(f"📡 Connected to {d.wifi_ssid}" if d.wifi_ssid else "📡 Enabled")
        if d.vpn_connected:
            ind.append("🔒 VPN Connected")
        ind.append(f"🔋 {d.battery_level}%")
        return " | ".join(ind)

    # --- Network (General) ---
    @is_tool()
    def check_network_status(self) -> str:
        """Checks your phone's connection status to cellular networks and Wi-Fi. Shows airplane mode status, signal strength, network type, whether mobile data is enabled, and whether data roaming is enabled."""  # noqa: E501
        d = self.device
        lines = [
            f"Airplane Mode: {'ON' if d.airplane_mode else 'OFF'}",
            f"SIM Card Status: {SimStatus(self._check_sim_status()).value}",
            f"Cellular Connection: {NetworkStatus(d.network_connection_status).value}",
            f"Cellular Signal: {SignalStrength(d.network_signal_strength).value}",
            f"Cellular Network Type: {NetworkTechnology(d.network_technology_connected).value}",
            f"Mobile Data Enabled: {'Yes' if d.data_enabled else 'No'}",
            f"Data Roaming Enabled: {'Yes' if d.roaming_enabled else 'No'}",
            f"Wi-Fi Radio: {'ON' if d.wifi_enabled else 'OFF'}",
            f"Wi-Fi Connected: {'Yes' if d.wifi_connected else 'No'}",
        ]
        if d.wifi_connected:
            lines.append(f"Connected Wi-Fi Network: {d.wifi_ssid}")
        return "\n".join(lines)

    @is_tool()
    def check_network_mode_preference(self) -> str:
        """Shows the current network mode preference."""
        return f"Network Mode Preference: {NetworkModePreference(self.device.network_mode_preference).value}"

    @is_tool(WRITE)
    def set_network_mode_preference(self, mode: NetworkModePreference | str) -> str:
        """Changes the type of cellular network your phone prefers to connect to (e.g., 5G, LTE/4G, 3G). Higher-speed networks (LTE/5G) provide faster data but may use more battery."""  # noqa: E501
        try:
            valid = NetworkModePreference(mode) if isinstance(mode, str) else mode
            self.device.network_mode_preference = valid
            self.simulate_network_search()
        except ValueError:
            valid = None
        if valid is None:
            return (f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: "
                    f"{', '.join(m.value for m in NetworkModePreference)}\nStatus Bar: {self._check_status_bar()}")  # fmt: skip
        return f"Preferred Network Mode set to: {valid.value}\nStatus Bar: {self._check_status_bar()}"

    def _get_mobile_data_working(self) -> bool:
        d, s = self.device, self.surroundings
        if d.airplane_mode or d.network_signal_strength == SignalStrength.NONE:
            return False
        if d.network_connection_status == NetworkStatus.NO_SERVICE:
            return False
        if s.is_abroad and (not d.roaming_enabled or not s.roaming_allowed):
            return False
        if not d.data_enabled:
            return False
        return not s.mobile_data_usage_exceeded

    @is_tool()
    def run_speed_test(self) -> str:
        """Measures your current internet connection speed (download speed). Provides information about connection quality and what activities it can support."""  # noqa: E501
        speed, desc = self._run_speed_test()
        if speed is None:
            return f"Speed test failed: {desc or 'Could not determine speed'}."
        return f"Speed Test Result: {speed:.2f} Mbps ({desc}). {_ADVICE.get(desc or '', '')}"

    def _run_speed_test(self) -> tuple[float | None, str | None]:
        if not self._get_mobile_data_working():
            return None, "No Connection"
        d = self.device
        factor = 1.0
        if d.vpn_connected and d.vpn_details and d.vpn_details.server_performance == PerformanceLevel.POOR:
            factor = 0.1
        if d.data_saver_mode:
            factor *= 0.2
        lo, hi = _TECH_SPEED.get(d.network_technology_connected, (0.0, 0.0))
        speed = round((lo + hi) / 2.0 * _SIGNAL_FACTOR.get(d.network_signal_strength, 0.0) * factor, 2)
        if speed < 1:
            return speed, "Very Poor"
        if speed < 5:
            return speed, "Poor"
        if speed < 25:
            return speed, "Fair"
        if speed < 100:
            return speed, "Good"
        return speed, "Excellent"

    # --- Airplane Mode ---
    @is_tool(WRITE)
    def toggle_airplane_mode(self) -> str:
        """Toggles Airplane Mode ON or OFF. When ON, it disconnects all wireless communications including cellular, Wi-Fi, and Bluetooth.
        Returns the new state of airplane_mode.
        """  # noqa: E501
        new = self._toggle_airplane_mode()
        return f"Airplane Mode is now {'ON' if new else 'OFF'}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_airplane_mode(self) -> bool:
        d = self.device
        was_on = d.airplane_mode
        d.airplane_mode = not was_on
        if was_on:
            d.network_connection_status = NetworkStatus.SEARCHING
            if d.wifi_enabled:
                d.wifi_connected, d.wifi_ssid, d.wifi_signal_strength = False, None, SignalStrength.NONE
        else:
            d.wifi_connected, d.wifi_ssid, d.wifi_signal_strength = False, None, SignalStrength.NONE
            if d.vpn_connected:
                self._disconnect_vpn()
        self.simulate_network_search()
        return d.airplane_mode

    def turn_airplane_mode_on(self) -> str:
        if not self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        if self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    # --- SIM Card ---
    @is_tool()
    def check_sim_status(self) -> str:
        """Checks if your SIM card is working correctly and displays its current status. Shows if the SIM is active, missing, or locked with a PIN or PUK code."""  # noqa: E501
        st = self._check_sim_status()
        return {SimStatus.ACTIVE: "Your SIM card is active and working.",
                SimStatus.MISSING: "No SIM card detected in the phone.",
                SimStatus.LOCKED_PIN: "The SIM card is locked with a PIN code.",
                SimStatus.LOCKED_PUK: "The SIM card is locked with a PUK code."}.get(st, f"Unknown SIM status: {st}")  # fmt: skip

    def _check_sim_status(self) -> SimStatus:
        return SimStatus.MISSING if self.device.sim_card_missing else self.device.sim_card_status

    @is_tool(WRITE)
    def reseat_sim_card(self) -> str:
        """Simulates removing and reinserting your SIM card. This can help resolve recognition issues."""
        self.device.sim_card_missing = False
        self.simulate_network_search()
        return f"SIM card re-seated successfully.\nStatus Bar: {self._check_status_bar()}"

    def unseat_sim_card(self) -> str:
        self.device.sim_card_missing = True
        self.simulate_network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: Literal["pin", "puk"]) -> str:
        if mode == "pin":
            self.device.sim_card_status = SimStatus.LOCKED_PIN
        elif mode == "puk":
            self.device.sim_card_status = SimStatus.LOCKED_PUK
        self.simulate_network_search()
        return f"SIM card locked successfully in {mode} mode."

    # --- Mobile Data & Roaming ---
    @is_tool(WRITE)
    def toggle_data(self) -> str:
        """Toggles your phone's mobile data connection ON or OFF. Controls whether your phone can use cellular data for internet access when Wi-Fi is unavailable.
        Returns the new data connection status.
        """  # noqa: E501
        new = self._toggle_data()
        return f"Mobile Data is now {'ON' if new else 'OFF'}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_data(self) -> bool:
        self.device.data_enabled = not self.device.data_enabled
        self.simulate_network_search()
        return self.device.data_enabled

    def turn_data_on(self) -> str:
        self.device.data_enabled = True
        return "Data connection restored."

    def turn_data_off(self) -> str:
        if self._toggle_data():
            self._toggle_data()
        return "Data connection broken."

    @is_tool(WRITE)
    def toggle_roaming(self) -> str:
        """Toggles Data Roaming ON or OFF. When ON, your phone can use data networks in areas outside your carrier's coverage.
        Returns the new data roaming status.
        """  # noqa: E501
        new = self._toggle_roaming()
        return f"Data Roaming is now {'ON' if new else 'OFF'}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_roaming(self) -> bool:
        self.device.roaming_enabled = not self.device.roaming_enabled
        self.simulate_network_search()
        return self.device.roaming_enabled

    def turn_roaming_on(self) -> str:
        if not self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now ON."

    def turn_roaming_off(self) -> str:
        if self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now OFF."

    @is_tool()
    def check_data_restriction_status(self) -> str:
        """Checks if your phone has any data-limiting features active. Shows if Data Saver mode is on."""
        return (
            "Data Saver mode is ON (limits data usage)."
            if self.device.data_saver_mode
            else "Data Saver mode is OFF."
        )

    @is_tool(WRITE)
    def toggle_data_saver_mode(self) -> str:
        """Toggles Data Saver mode ON or OFF. When ON, it reduces data usage, which may affect data speed.
        Returns the new data saver mode status.
        """
        new = self._toggle_data_saver_mode()
        return f"Data Saver Mode is now {'ON' if new else 'OFF'}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_data_saver_mode(self) -> bool:
        self.device.data_saver_mode = not self.device.data_saver_mode
        return self.device.data_saver_mode

    def turn_data_saver_mode_on(self) -> str:
        if not self._toggle_data_saver_mode():
            self._toggle_data_saver_mode()
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self) -> str:
        if self._toggle_data_saver_mode():
            self._toggle_data_saver_mode()
        return "Data Saver Mode is now OFF."

    # --- APN Settings ---
    @is_tool()
    def check_apn_settings(self) -> str:
        """Checks the technical APN settings your phone uses to connect to your carrier's mobile data network. Shows current APN name and MMSC URL for picture messaging."""  # noqa: E501
        s = self.device.active_apn_settings
        return (f"Current APN Name: {APNNames(s.apn_name).value or 'Not Set'}\nMMSC URL (for picture messages): "
                f"{s.mmsc_url or 'Not Set'}\n(These are technical settings, usually best left unchanged.)")  # fmt: skip

    @is_tool(WRITE)
    def set_apn_settings(self, apn_settings: APNSettings | dict) -> str:
        """Sets the APN settings for the phone."""
        if isinstance(apn_settings, dict):
            apn_settings = APNSettings(**apn_settings)
        self.device.active_apn_settings = apn_settings
        self.simulate_network_search()
        return f"APN settings set to: {APNNames(apn_settings.apn_name).value}\nStatus Bar: {self._check_status_bar()}"

    @is_tool(WRITE)
    def reset_apn_settings(self) -> str:
        """Resets your APN settings to the default settings."""
        self.device.active_apn_settings.reset_at_reboot = True
        self.simulate_network_search()
        return f"APN settings will reset at reboot.\nStatus Bar: {self._check_status_bar()}"

    def break_apn_settings(self) -> str:
        self.device.active_apn_settings.apn_name = APNNames.BROKEN
        self.simulate_network_search()
        return "APN settings broken. Please call reset_apn_settings() to fix."

    def break_apn_mms_setting(self) -> str:
        self.device.active_apn_settings.mmsc_url = None
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    # --- Wi-Fi ---
    @is_tool()
    def check_wifi_status(self) -> str:
        """Checks your Wi-Fi connection status. Shows if Wi-Fi is turned on, which network you're connected to (if any), and the signal strength."""  # noqa: E501
        d = self.device
        if not d.wifi_enabled:
            return "Wi-Fi is turned OFF."
        if d.wifi_connected:
            return (f"Wi-Fi is ON and connected to '{d.wifi_ssid}'. Signal strength: "
                    f"{SignalStrength(d.wifi_signal_strength).value}.")  # fmt: skip
        return "Wi-Fi is ON but not connected to any network."

    @is_tool(WRITE)
    def toggle_wifi(self) -> str:
        """Toggles your phone's Wi-Fi radio ON or OFF. Controls whether your phone can discover and connect to wireless networks for internet access.
        Returns the new Wi-Fi status.
        """  # noqa: E501
        d = self.device
        if d.airplane_mode:
            return f"Cannot change Wi-Fi settings while Airplane Mode is ON.\nStatus Bar: {self._check_status_bar()}"
        d.wifi_enabled = not d.wifi_enabled
        if not d.wifi_enabled:
            d.wifi_connected, d.wifi_ssid, d.wifi_signal_strength = False, None, SignalStrength.NONE
        return f"Wi-Fi is now {'ON' if d.wifi_enabled else 'OFF'}.\nStatus Bar: {self._check_status_bar()}"

    # --- Wi-Fi Calling ---
    @is_tool()
    def check_wifi_calling_status(self) -> str:
        """Checks if Wi-Fi Calling is enabled on your device. This feature allows you to make and receive calls over a Wi-Fi network instead of using the cellular network."""  # noqa: E501
        return f"Wi-Fi Calling is currently turned {'ON' if self.device.wifi_calling_enabled else 'OFF'}."

    @is_tool(WRITE)
    def toggle_wifi_calling(self) -> str:
        """Toggles Wi-Fi Calling ON or OFF. This feature allows you to make and receive calls over Wi-Fi instead of the cellular network, which can help in areas with weak cellular signal.
        Returns the new Wi-Fi Calling status.
        """  # noqa: E501
        self.device.wifi_calling_enabled = not self.device.wifi_calling_enabled
        return (f"Wi-Fi Calling is now {'ON' if self.device.wifi_calling_enabled else 'OFF'}.\n"
                f"Status Bar: {self._check_status_bar()}")  # fmt: skip

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        if self.device.wifi_calling_enabled != enabled:
            self.device.wifi_calling_enabled = not self.device.wifi_calling_enabled
        msg = f"Wi-Fi Calling is now {'ON' if enabled else 'OFF'}."
        if mms_over_wifi is not None:
            self.device.wifi_calling_mms_over_wifi = mms_over_wifi
            msg += f"\nMMS over Wi-Fi is now {'ON' if mms_over_wifi else 'OFF'}."
        return msg

    # --- VPN ---
    @is_tool()
    def check_vpn_status(self) -> str:
        """Checks if you're using a VPN (Virtual Private Network) connection. Shows if a VPN is active, connected, and displays any available connection details."""  # noqa: E501
        d = self.device
        if d.vpn_connected:
            details = d.vpn_details.model_dump() if d.vpn_details else None
            if details:
                return f"VPN is ON and connected. Details: {details}"
            return "VPN is ON and connected (no specific details available)."
        if d.vpn_enabled_setting:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @is_tool(WRITE)
    def connect_vpn(self) -> str:
        """Connects to your VPN (Virtual Private Network)."""
        if self.device.vpn_connected:
            return "VPN already connected."
        self.device.vpn_connected = True
        self.device.vpn_details = _default_vpn()
        return f"VPN connected successfully.\nStatus Bar: {self._check_status_bar()}"

    @is_tool(WRITE)
    def disconnect_vpn(self) -> str:
        """Disconnects any active VPN (Virtual Private Network) connection. Stops routing your internet traffic through a VPN server, which might affect connection speed or access to content."""  # noqa: E501
        done = self._disconnect_vpn()
        msg = "VPN disconnected successfully." if done else "No active VPN connection to disconnect."
        return f"{msg}\nStatus Bar: {self._check_status_bar()}"

    def _disconnect_vpn(self) -> bool:
        if not self.device.vpn_connected:
            return False
        self.device.vpn_connected = False
        self.device.vpn_details = None
        return True

    def break_vpn(self) -> str:
        self.connect_vpn()
        assert self.device.vpn_details is not None
        self.device.vpn_details.server_performance = PerformanceLevel.POOR
        return "VPN connection broken."

    # --- Applications ---
    @is_tool()
    def check_installed_apps(self) -> str:
        """Returns the name of all installed apps on the phone."""
        return f"The following apps are installed on the phone: {', '.join(self.device.app_statuses)}"

    @staticmethod
    def _granted(perms: AppPermissions) -> list[str]:
        return [n.replace("_", " ").lower() for n, ok in perms.model_dump().items() if ok]

    @is_tool()
    def check_app_status(self, app_name: str) -> str:
        """Checks detailed information about a specific app. Shows its permissions and background data usage settings."""  # noqa: E501
        app = self.device.app_statuses.get(app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        lines = [f"Status for App: {app_name}"]
        granted = self._granted(app.permissions)
        if not granted:
            lines.append(" - Permissions: None granted.")
        else:
            lines.append(" - Permissions Granted:")
            lines.extend(f"   - {p}" for p in granted)
        return "\n".join(lines)

    @is_tool()
    def check_app_permissions(self, app_name: str) -> str:
        """Checks what permissions a specific app currently has. Shows if the app has access to features like storage, camera, location, etc."""  # noqa: E501
        app = self.device.app_statuses.get(app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = self._granted(app.permissions)
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @is_tool(WRITE)
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        """Gives a specific permission to an app (like access to storage, camera, or location). Required for some app functions to work properly.

        Args:
            app_name: The name of the app to grant the permission to.
            permission: The permission to grant, should be lowercase.
        """  # noqa: E501
        app: AppStatus | None = self.device.app_statuses.get(app_name)
        permission = permission.lower()
        if app:
            available = list(app.permissions.model_dump().keys())
            if permission not in available:
                ok, msg = False, (f"Permission '{permission}' not tracked for app '{app_name}', available "
                                  f"permissions: {available}")  # fmt: skip
            else:
                setattr(app.permissions, permission, True)
                ok, msg = True, f"Permission '{permission}' granted to app '{app_name}'."
        else:
            ok, msg = False, f"App '{app_name}' not found. Cannot grant permission."
        return f"{'Success. ' if ok else 'Error. '}{msg}\nStatus Bar: {self._check_status_bar()}"

    def remove_app_permission(self, app_name: str, permission: str) -> tuple[bool, str]:
        app = self.device.app_statuses.get(app_name)
        permission = permission.lower()
        if not app:
            return False, f"App '{app_name}' not found. Cannot remove permission."
        if not hasattr(app.permissions, permission):
            return False, f"Permission '{permission}' not tracked for app '{app_name}'."
        setattr(app.permissions, permission, False)
        return True, f"Permission '{permission}' removed from app '{app_name}'."

    # --- MMS ---
    @is_tool()
    def can_send_mms(self) -> str:
        """Checks if the default messaging app can send MMS messages."""
        if self._can_send_mms():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

    def _can_send_mms(self) -> bool:
        d = self.device
        if not self._get_mobile_data_working():
            return False
        if d.network_technology_connected == NetworkTechnology.TWO_G:
            return False
        if d.wifi_calling_enabled and d.wifi_calling_mms_over_wifi:
            return False
        if d.active_apn_settings.mmsc_url is None:
            return False
        app = d.app_statuses.get("messaging")
        return bool(app is not None and app.permissions.storage and app.permissions.sms)

    # --- Device Level Actions ---
    @is_tool(WRITE)
    def reboot_device(self) -> str:
        """Restarts your phone completely. This can help resolve many temporary software glitches by refreshing all running services and connections."""  # noqa: E501
        lines = []
        if self.device.active_apn_settings.reset_at_reboot:
            lines.append("Resetting APN settings...")
            self.device.active_apn_settings = APNSettings.model_validate({})
        lines.append("Restarting network services...")
        self.device.network_connection_status = NetworkStatus.SEARCHING
        self.simulate_network_search()
        return "\n".join(lines) + f"\nStatus Bar: {self._check_status_bar()}"

    def simulate_network_search(self) -> None:
        """τ²-bench's network search: the SIM, the mode preference and where the user is decide the
        connection; airplane mode, a broken APN and an inactive line take the service away."""
        d, s = self.device, self.surroundings
        st = self._check_sim_status()
        if st == SimStatus.ACTIVE:
            d.network_connection_status = NetworkStatus.CONNECTED
            pref = d.network_mode_preference
            if pref == NetworkModePreference.FOUR_G_5G_PREFERRED:
                five = s.signal_strength.get(NetworkTechnology.FIVE_G, SignalStrength.NONE)
                if five == SignalStrength.NONE:
                    d.network_technology_connected = NetworkTechnology.FOUR_G
                    d.network_signal_strength = s.signal_strength.get(
                        NetworkTechnology.FOUR_G, SignalStrength.NONE
                    )
                else:
                    d.network_technology_connected, d.network_signal_strength = NetworkTechnology.FIVE_G, five
            else:
                tech = _MODE_TECH.get(pref, NetworkTechnology.FOUR_G)
                d.network_technology_connected = tech
                d.network_signal_strength = s.signal_strength.get(tech, SignalStrength.NONE)
        else:
            self._no_service()
        if d.airplane_mode or d.active_apn_settings.apn_name == APNNames.BROKEN or not s.line_active:
            self._no_service()

    def _no_service(self) -> None:
        d = self.device
        d.network_connection_status = NetworkStatus.NO_SERVICE
        d.network_technology_connected = NetworkTechnology.NONE
        d.network_signal_strength = SignalStrength.NONE

    # --- Payment Request ---
    @is_tool()
    def check_payment_request(self) -> str:
        """
        Checks if the agent has sent you a payment request.
        """
        pr = self.surroundings.payment_request
        if pr is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {pr.bill_id} of {pr.amount_due} USD."

    @is_tool(WRITE)
    def make_payment(self) -> str:
        """
        Makes a payment for the bill that the agent has sent you.
        """
        pr: PaymentRequest | None = self.surroundings.payment_request
        if pr is None:
            return "You do not have a payment request."
        pr.paid = True
        return f"Payment of {pr.amount_due} USD has been made for bill {pr.bill_id}."

    # --- environment assertions (not tools) ---
    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        return self.device.airplane_mode == expected_status

    def assert_service_status(self, expected_status: str) -> bool:
        return self.device.network_connection_status == NetworkStatus(expected_status)

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        return self._get_mobile_data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        return self.device.roaming_enabled == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        return self.device.data_saver_mode == expected_status

    def assert_internet_speed(self, expected_speed: float, expected_desc: str | None = None) -> bool:
        speed, desc = self._run_speed_test()
        speed = speed or 0.0
        if expected_desc is None:
            return speed >= expected_speed
        return speed >= expected_speed and (desc or "").lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        return (self._run_speed_test()[1] or "").lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        return self._can_send_mms() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        return self.surroundings.mobile_data_usage_exceeded == expected_status


USER_TOOL_NAMES: tuple[str, ...] = tool_names(TelecomUserTools)
USER_TOOL_SPECS: list[dict] = [tool_spec(TelecomUserTools, n) for n in USER_TOOL_NAMES]
"""The 30 tools as τ²-bench's simulated customer sees them."""
