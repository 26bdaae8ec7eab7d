"""The speed calibration a shared link carries: the Speed page writes it, the memory and simulator pages use it."""

from __future__ import annotations

import streamlit as st

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.speed.calibration import CalibrationProfile, decode_profile
from ui.markdown_text import literal

#: URL parameter holding an encoded calibration profile (calculators/speed/calibration.encode_profile).
CALIBRATION_PARAM = "speed_cal"


def link_calibration() -> CalibrationProfile | None:
    """The calibration profile in the URL's `speed_cal`, or None when the link has none.

    An unreadable profile is not used: a visible note says why, and the page goes on with the default fit.
    """
    encoded = st.query_params.get(CALIBRATION_PARAM)
    if not encoded:
        return None
    try:
        return decode_profile(encoded)
    except ServewiseInputError as exc:
        st.warning(literal(_("The link's speed calibration was not used: {reason}").format(reason=exc)),
                   icon=":material/link_off:")
        return None
